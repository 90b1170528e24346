import Foundation

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
func writeFully(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(SpoolFile.Failure) {
    var done = 0
    while done < bytes.count {
        let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
        if n < 0 {
            if errno == EINTR { continue }
            throw SpoolFile.Failure(call: "write", code: errno)
        }
        done += n
    }
}
