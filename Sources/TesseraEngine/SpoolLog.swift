import Foundation

/// A job's results in the coordinator's spool, appended one after another to one file: a result is its
/// offset and size there. One file per job instead of one per segment spares the file system an inode
/// created, renamed and deleted per segment, which at hundreds of segments a second cost more than
/// writing the bytes. Like `SpoolFile`, no `fsync`: every result carries its checksum and is checked
/// before it is stitched or trusted after a restart; one a crash damaged is encoded again.
///
/// One writer at a time (the coordinator's result spooler); a coordinator that restarts appends after
/// what is there. Bytes of results that never counted (late duplicates) stay unused until the job's
/// spool goes.
public final class SpoolLog {
    public let path: String
    let fd: Int32
    /// Where the next result goes.
    public private(set) var size: Int64

    public init(path: String) throws(SpoolFile.Failure) {
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SpoolFile.Failure(call: "open", code: errno) }
        self.path = path
        size = Self.size(of: fd)
    }

    deinit { close(fd) }

    static func size(of fd: Int32) -> Int64 {
        var info = stat()
        return fstat(fd, &info) == 0 ? Int64(info.st_size) : 0
    }

    /// Appends `bytes`; returns where they start.
    public func append(_ bytes: [UInt8]) throws(SpoolFile.Failure) -> Int64 {
        let result: Result<Int64, SpoolFile.Failure> = bytes.withUnsafeBytes { raw in
            Result { () throws(SpoolFile.Failure) in try append(raw) }
        }
        return try result.get()
    }

    /// As `append`, from bytes wherever they are (a received message's buffer).
    public func append(_ raw: UnsafeRawBufferPointer) throws(SpoolFile.Failure) -> Int64 {
        let start = size
        do {
            try writeFully(fd, raw, at: start)
        } catch {
            // A part may have been written: the next result goes after whatever is there.
            size = max(start, Self.size(of: fd))
            throw error
        }
        size = start + Int64(raw.count)
        return start
    }

    /// `count` bytes at `offset` of the file at `path`; nil when it is missing or shorter.
    public static func read(_ path: String, offset: Int64, count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0 else { return nil }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        let complete = bytes.withUnsafeMutableBytes { readFully(fd, into: $0, at: offset) }
        return complete ? bytes : nil
    }
}
