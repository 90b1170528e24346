import Foundation
import Synchronization
import TesseraCore

/// A job's encoded results on disk: appended one after another to one file (`segments.tres`) in the
/// job's directory, each found again by its offset, size and checksum (`Entry`, what the store records),
/// and trusted only once that checksum is checked (`load`, `intact`): there is no `fsync`, and a result a
/// crash damaged is encoded again. Opened again, it appends after what is there.
public final class ResultSpool: Sendable {
    /// Where one result lies, as the store records it.
    public struct Entry: Sendable, Equatable {
        public var path: String
        public var offset: Int64
        public var size: Int
        /// The XXH64 the result carries in its trailer, in hex.
        public var checksum: String

        public init(path: String, offset: Int64, size: Int, checksum: String) {
            (self.path, self.offset, self.size, self.checksum) = (path, offset, size, checksum)
        }
    }

    /// A job's spool file, in its directory.
    static let fileName = "segments.tres"

    public let directory: URL
    public let path: String
    let fd: Int32
    /// Where the next result goes; held while a result is appended, so encoder threads may share one spool.
    let end: Mutex<Int64>

    /// Opens the spool in `directory` for appending, creating the directory and the file if need be.
    public init(directory: URL) throws(FileError) {
        try makeDirectory(directory.path)
        self.directory = directory
        path = directory.appendingPathComponent(Self.fileName).path
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileError(call: "open") }
        end = Mutex(Self.size(of: fd))
    }

    /// Opens job `job`'s spool, in its directory under `root`.
    public convenience init(root: URL, job: String) throws(FileError) {
        try self.init(directory: Self.directory(of: job, in: root))
    }

    deinit { close(fd) }

    /// The directory that holds job `job`'s spool under `root`.
    public static func directory(of job: String, in root: URL) -> URL { root.appendingPathComponent(job) }

    /// Where the next result goes.
    public var size: Int64 { end.withLock { $0 } }

    static func size(of fd: Int32) -> Int64 {
        var info = stat()
        return fstat(fd, &info) == 0 ? Int64(info.st_size) : 0
    }

    /// Appends one result's bytes; returns where they start.
    public func append(_ bytes: [UInt8]) throws(FileError) -> Int64 {
        let result: Result<Int64, FileError> = bytes.withUnsafeBytes { raw in
            Result { () throws(FileError) in try append(raw) }
        }
        return try result.get()
    }

    /// Appends an encoded segment; returns where it lies.
    public func append(_ segment: EncodedSegment) throws(FileError) -> Entry {
        let (bytes, checksum) = segment.serializedWithChecksum()
        return Entry(path: path, offset: try append(bytes), size: bytes.count, checksum: checksum)
    }

    /// As `append`, from bytes wherever they are (a received message's buffer).
    public func append(_ raw: UnsafeRawBufferPointer) throws(FileError) -> Int64 {
        try end.withLock { (end: inout Int64) throws(FileError) -> Int64 in
            let start = end
            do throws(FileError) {
                try writeFully(fd, raw, at: start)
            } catch {
                // A part may have been written: the next result goes after whatever is there.
                end = max(start, Self.size(of: fd))
                throw error
            }
            end = start + Int64(raw.count)
            return start
        }
    }

    /// Removes the spool: its directory and everything in it.
    public func remove() { try? FileManager.default.removeItem(at: directory) }

    /// Removes job `job`'s spool under `root`.
    public static func remove(_ job: String, in root: URL) { try? FileManager.default.removeItem(at: directory(of: job, in: root)) }

    /// A recorded result, decoded: its checksum compared with the recorded one, then checked against its
    /// bytes. Segment `k`'s, for the stitcher: what is wrong is a stitch error naming the segment.
    public static func load(_ entry: Entry?, segment k: Int) throws(TesseraError) -> EncodedSegment {
        guard let entry else { throw TesseraError(.stitch, segment: k, "no spooled result recorded") }
        guard let bytes = recorded(entry) else { throw TesseraError(.stitch, segment: k, "spooled result missing or not the one recorded") }
        do {
            return try EncodedSegment(serialized: bytes)
        } catch {
            throw TesseraError(.stitch, segment: k, "spooled result damaged (\(error))")
        }
    }

    /// Whether a recorded result is there, is the one recorded, and is intact (every check of `load`
    /// but the packets' copy).
    public static func intact(_ entry: Entry) -> Bool {
        guard let bytes = recorded(entry) else { return false }
        return (try? EncodedSegment.checkedHeader(bytes)) != nil
    }

    /// The recorded bytes, when they are there and carry the recorded checksum (not yet compared with
    /// the bytes: decoding does that).
    static func recorded(_ entry: Entry) -> [UInt8]? {
        guard let bytes = read(entry.path, offset: entry.offset, count: entry.size),
              Blob.storedChecksum(bytes).map(PayloadChecksum.hex) == entry.checksum else { return nil }
        return bytes
    }

    /// `count` bytes at `offset` of the file at `path`; nil when it is missing or shorter.
    static func read(_ path: String, offset: Int64, count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0 else { return nil }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        let complete = bytes.withUnsafeMutableBytes { readFully(fd, into: $0, at: offset) }
        return complete ? bytes : nil
    }
}
