import TesseraCore

/// An object read in ranged GETs pinned by its ETag (`If-Match`), with read-ahead: a read outside the window
/// fetches what was asked for and a little more (64 KiB), and each read that carries on where the last window
/// ended, or skips less than the next fetch would bring (at most 1 MiB), doubles the next fetch, up to 8 MiB. Probing a file reads only what libavformat asks for; a long
/// sequential read costs few requests. Blocking: one reader per thread, as its client.
public final class S3ObjectReader: RandomAccessBytes {
    public static let firstFetch = 64 << 10
    public static let largestFetch = 8 << 20
    /// The longest skip read through rather than fetched anew: a request's wait moves about this much.
    public static let longestSkip = 1 << 20

    /// The object's name (`s3://bucket/key`), for messages.
    public let name: String
    public let size: Int64
    public let etag: String
    private let fetch: (Range<Int64>) throws(S3Error) -> [UInt8]
    /// Bytes fetched in one GET when a read first lands in them (a task's stretch of the object), at most
    /// `largestWhole` at a time.
    public var fetchedWhole: Range<Int64>?
    public static let largestWhole: Int64 = 64 << 20
    /// The first fetch that failed (after its retries): what stopped the reads of a demuxer that reports only
    /// its own error, or none.
    public private(set) var failure: S3Error?
    private var windowStart: Int64 = 0
    private var window: [UInt8] = []
    private var nextFetch = firstFetch
    /// GETs made and bytes fetched so far.
    public private(set) var requests = 0
    public private(set) var fetchedBytes: Int64 = 0

    public init(client: S3Client, location: S3Location, object: S3ObjectInfo) {
        name = location.description
        size = object.size
        etag = object.etag
        fetch = { [etag] range throws(S3Error) in try client.get(location, range: range, ifMatch: etag) }
    }

    /// The object behind a presigned GET `url`, read by `reader` (a worker's, holding no credentials).
    public init(presigned url: String, reader: S3PresignedReader, object name: String, size: Int64, etag: String) {
        self.name = name
        self.size = size
        self.etag = etag
        fetch = { range throws(S3Error) in try reader.get(url, range: range, ifMatch: etag, object: name) }
    }

    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset < size, !buffer.isEmpty else { return 0 }
        let windowEnd = windowStart + Int64(window.count)
        if !(windowStart..<windowEnd).contains(offset) {
            // Reading on, or skipping less than the next fetch would bring and at most `longestSkip` (one stream of
            // an interleaved file): the fetches grow from where the window ended. Elsewhere: a small fetch where asked.
            let readingOn = !window.isEmpty && offset >= windowEnd
                && offset - windowEnd < Int64(min(nextFetch * 2, Self.largestFetch, Self.longestSkip))
            nextFetch = readingOn ? min(nextFetch * 2, Self.largestFetch) : Self.firstFetch
            let start = readingOn ? windowEnd : offset
            var end = min(size, max(offset + Int64(buffer.count), start + Int64(nextFetch)))
            if let whole = fetchedWhole, whole.contains(start) { end = min(size, max(end, min(whole.upperBound, start + Self.largestWhole))) }
            window = []  // the old window goes before the new one arrives
            do {
                window = try fetch(start..<end)
            } catch {
                if failure == nil { failure = error }
                throw error
            }
            windowStart = start
            requests += 1
            fetchedBytes += Int64(window.count)
        }
        let from = Int(offset - windowStart)
        let count = min(buffer.count, window.count - from)
        window.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[from..<(from + count)])) }
        return count
    }
}
