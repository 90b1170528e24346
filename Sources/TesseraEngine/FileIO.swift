import Foundation

/// A failed file system call: the call and its errno.
public struct FileError: Error, CustomStringConvertible, Sendable {
    public var call: String
    public var code: Int32

    public init(call: String, code: Int32 = errno) {
        self.call = call
        self.code = code
    }

    public var description: String { "\(call): \(String(cString: strerror(code)))" }
}

/// Fills `buffer` from the file `fd` at `offset`; false on an error or the end of the file first.
func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Bool {
    var done = 0
    while done < buffer.count {
        let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return false }
        done += n
    }
    return true
}

/// Writes all of `bytes` to the file `fd` at `offset`.
func writeFully(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(FileError) {
    var done = 0
    while done < bytes.count {
        let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
        if n < 0 {
            if errno == EINTR { continue }
            throw FileError(call: "write")
        }
        done += n
    }
}

/// Creates the directory at `path` and any missing parents; one already there is fine.
func makeDirectory(_ path: String) throws(FileError) {
    if mkdir(path, 0o777) == 0 || errno == EEXIST { return }
    let code = errno, parent = (path as NSString).deletingLastPathComponent
    guard code == ENOENT, !parent.isEmpty, parent != path else { throw FileError(call: "mkdir", code: code) }
    try makeDirectory(parent)
    guard mkdir(path, 0o777) == 0 || errno == EEXIST else { throw FileError(call: "mkdir") }
}
