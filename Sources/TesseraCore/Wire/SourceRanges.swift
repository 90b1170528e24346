/// Where a task's packets are when the payload does not carry their bytes: a presigned GET for the object
/// the job reads, pinned by its ETag, and each packet's byte position in it (the payload's records keep
/// their timestamps and flags, with no data). The worker reads the bytes itself, holding no credentials.
public struct SourceRanges: Codable, Hashable, Sendable {
    /// A presigned GET of the object: a secret while it lasts, so it appears in no log or error.
    public var url: String
    /// `s3://bucket/key`: what errors name.
    public var object: String
    /// The ETag the job pinned; every read carries it (`If-Match`), so a replaced object fails the read.
    public var etag: String
    /// Each packet's first byte in the object, in the payload's order.
    public var positions: [Int64]
    /// Each packet's size in bytes.
    public var sizes: [Int]

    /// What a worker that reads `SourceRanges` itself announces in its capabilities; other workers get the bytes.
    public static let capability = "source-ranges"

    /// How long a task's URL lasts: the worker reads at once, but the URL must outlive the lease by far (a lease
    /// renewed while a slow worker starts, clocks a little apart): four leases, at least an hour, at most S3's 7 days.
    public static func urlLifetime(leaseSeconds: Double) -> Int {
        guard leaseSeconds.isFinite else { return 604_800 }
        return Int(min(604_800, max(3600, (leaseSeconds * 4).rounded(.up))))
    }

    /// Packets closer than this are fetched in one GET, with the bytes between them (interleaved audio).
    public static let largestGap: Int64 = 1 << 20

    public init(url: String, object: String, etag: String, positions: [Int64], sizes: [Int]) {
        self.url = url
        self.object = object
        self.etag = etag
        self.positions = positions
        self.sizes = sizes
    }

    /// One entry per packet, each a byte range that cannot overflow.
    func isValid(packets: Int) -> Bool {
        positions.count == packets && sizes.count == packets && !url.isEmpty
            && zip(positions, sizes).allSatisfy { $0 >= 0 && $1 > 0 && $1 <= Int32.max && $0 <= Int64.max - Int64($1) }
    }

    /// The GETs that read every packet: byte ranges in file order, packets less than `largestGap` apart merged.
    public var spans: [Range<Int64>] {
        let ranges = zip(positions, sizes).map { $0..<($0 + Int64($1)) }.sorted { $0.lowerBound < $1.lowerBound }
        var spans: [Range<Int64>] = []
        for range in ranges {
            if let last = spans.last, range.lowerBound <= last.upperBound + Self.largestGap {
                spans[spans.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                spans.append(range)
            }
        }
        return spans
    }

    /// The packets' bytes, cut out of the spans `fetch` reads (`spans`, in order); nil when a span comes back short.
    public func packetBytes<E: Error>(_ fetch: (Range<Int64>) throws(E) -> [UInt8]) throws(E) -> [[UInt8]]? {
        var fetched: [(range: Range<Int64>, bytes: [UInt8])] = []
        for span in spans {
            let bytes = try fetch(span)
            guard bytes.count == span.count else { return nil }
            fetched.append((span, bytes))
        }
        return zip(positions, sizes).map { position, size in
            let span = fetched.first { $0.range.contains(position) }!
            let from = Int(position - span.range.lowerBound)
            return Array(span.bytes[from..<(from + size)])
        }
    }
}
