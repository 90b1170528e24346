import TesseraCore

/// An object read in ranged GETs pinned by its ETag (`If-Match`), with read-ahead: a read outside the window
/// fetches what was asked for and a little more (64 KiB), and each read that carries on where the last window
/// ended doubles the next fetch, up to 8 MiB. Probing a file reads only what libavformat asks for; a long
/// sequential read costs few requests. Blocking: one reader per thread, as its client.
public final class S3ObjectReader: RandomAccessBytes {
    public static let firstFetch = 64 << 10
    public static let largestFetch = 8 << 20

    public let location: S3Location
    public let size: Int64
    public let etag: String
    private let client: S3Client
    private var windowStart: Int64 = 0
    private var window: [UInt8] = []
    private var nextFetch = firstFetch
    /// GETs made and bytes fetched so far.
    public private(set) var requests = 0
    public private(set) var fetchedBytes: Int64 = 0

    public init(client: S3Client, location: S3Location, object: S3ObjectInfo) {
        self.client = client
        self.location = location
        size = object.size
        etag = object.etag
    }

    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset < size, !buffer.isEmpty else { return 0 }
        let windowEnd = windowStart + Int64(window.count)
        if !(windowStart..<windowEnd).contains(offset) {
            nextFetch = offset == windowEnd && !window.isEmpty ? min(nextFetch * 2, Self.largestFetch) : Self.firstFetch
            let end = min(size, offset + Int64(max(buffer.count, nextFetch)))
            window = []  // the old window goes before the new one arrives
            window = try client.get(location, range: offset..<end, ifMatch: etag)
            windowStart = offset
            requests += 1
            fetchedBytes += Int64(window.count)
        }
        let from = Int(offset - windowStart)
        let count = min(buffer.count, window.count - from)
        window.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[from..<(from + count)])) }
        return count
    }
}
