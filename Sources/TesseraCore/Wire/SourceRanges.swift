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
    /// Matroska or WebM: each packet follows its block's header, which the worker reads with it and checks
    /// (`positions` are the bytes after it); nil: each packet is whole at its position (MP4, QuickTime).
    public var blockHeader: MatroskaBlockHeader?
    /// AVI: each packet follows its chunk's header, read with it and checked.
    public var chunkHeader: AVIChunkHeader?
    /// MPEG-TS or MXF: the worker demuxes the packets from a stretch of the object (each is cut in 188-byte pieces,
    /// or wrapped in a KLV triplet);
    /// `positions` and `sizes` are then the demuxer's, to check what it finds.
    public var demuxed: DemuxedStretch?

    /// What a worker that reads `SourceRanges` itself announces in its capabilities ("1"); other workers get the bytes.
    public static let capability = "source-ranges"
    /// The version it reads, announced beside it (absent: 1), so that coordinators that know only version 1 still
    /// send it version 1's tasks.
    public static let versionCapability = "source-ranges-version"
    /// 1: whole packets; 2: also Matroska blocks (`blockHeader`), AVI chunks (`chunkHeader`) and MPEG-TS or MXF
    /// stretches (`demuxed`).
    public static let version = 2

    /// The version a worker with `capabilities` reads; 0: it reads none.
    public static func version(in capabilities: [String: String]) -> Int {
        guard capabilities[capability] == "1" else { return 0 }
        return capabilities[versionCapability].flatMap { Int($0) } ?? 1
    }

    /// The version a worker must read for these ranges.
    public var versionNeeded: Int { packetHeader == nil && demuxed == nil ? 1 : 2 }

    /// How long a task's URL lasts: the worker reads at once, but the URL must outlive the lease by far (a lease
    /// renewed while a slow worker starts, clocks a little apart): four leases, at least an hour, at most S3's 7 days.
    public static func urlLifetime(leaseSeconds: Double) -> Int {
        guard leaseSeconds.isFinite else { return 604_800 }
        return Int(min(604_800, max(3600, (leaseSeconds * 4).rounded(.up))))
    }

    /// Packets closer than this are fetched in one GET, with the bytes between them (interleaved audio).
    public static let largestGap: Int64 = 1 << 20

    public init(url: String, object: String, etag: String, positions: [Int64], sizes: [Int], header: (any PacketHeader)? = nil,
                demuxed: DemuxedStretch? = nil) {
        self.url = url
        self.object = object
        self.etag = etag
        self.positions = positions
        self.sizes = sizes
        self.blockHeader = header as? MatroskaBlockHeader
        self.chunkHeader = header as? AVIChunkHeader
        self.demuxed = demuxed
    }

    /// The header read before each packet, if any.
    public var packetHeader: (any PacketHeader)? {
        if let blockHeader { return blockHeader }
        return chunkHeader
    }

    /// Bytes read before each packet: its header (for a Matroska block, with its element's ID and size).
    var headerBytes: Int { packetHeader?.bytesBefore ?? 0 }

    /// One entry per packet, each a byte range (with its header) that cannot overflow.
    func isValid(packets: Int) -> Bool {
        let header = headerBytes
        if let demuxed, demuxed.bytes.isEmpty || demuxed.bytes.lowerBound < 0 || demuxed.bytes.upperBound > demuxed.objectSize
            || packetHeader != nil { return false }
        if blockHeader != nil, chunkHeader != nil { return false }
        return positions.count == packets && sizes.count == packets && !url.isEmpty && (0...20).contains(header)
            && zip(positions, sizes).allSatisfy { $0 >= Int64(header) && $1 > 0 && $1 <= Int32.max && $0 <= Int64.max - Int64($1) }
    }

    /// The GETs that read every packet (and its header): byte ranges in file order, packets less than
    /// `largestGap` apart merged.
    public var spans: [Range<Int64>] {
        let header = Int64(headerBytes)
        let ranges = zip(positions, sizes).map { ($0 - header)..<($0 + Int64($1)) }.sorted { $0.lowerBound < $1.lowerBound }
        var spans: [Range<Int64>] = []
        for range in ranges {
            if let last = spans.last, range.lowerBound - last.upperBound <= Self.largestGap {
                spans[spans.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                spans.append(range)
            }
        }
        return spans
    }

    /// The packets' bytes, cut out of the spans `fetch` reads (`spans`, in order); nil when a span comes back
    /// short or the header before a packet is not one that holds it (`PacketHeader.frame(in:size:)`).
    public func packetBytes<E: Error>(_ fetch: (Range<Int64>) throws(E) -> [UInt8]) throws(E) -> [[UInt8]]? {
        var fetched: [(range: Range<Int64>, bytes: [UInt8])] = []
        for span in spans {
            let bytes = try fetch(span)
            guard bytes.count == span.count else { return nil }
            fetched.append((span, bytes))
        }
        let header = headerBytes
        var packets: [[UInt8]] = []
        packets.reserveCapacity(positions.count)
        for (position, size) in zip(positions, sizes) {
            let span = fetched.first { $0.range.contains(position - Int64(header)) }!
            let from = Int(position - span.range.lowerBound)
            if let packetHeader {
                guard let frame = packetHeader.frame(in: span.bytes[(from - header)..<(from + size)], size: size) else { return nil }
                packets.append(Array(frame))
            } else {
                packets.append(Array(span.bytes[from..<(from + size)]))
            }
        }
        return packets
    }
}

/// Where a worker demuxes an MPEG-TS or MXF task's packets: the object's head (its program tables, its header
/// partition) and then a stretch from where the task's first packet starts, fetched in one GET.
public struct DemuxedStretch: Codable, Hashable, Sendable {
    /// The object's size in bytes.
    public var objectSize: Int64
    /// From the first packet's start to a little past the last's end (the demuxer knows a packet has ended when
    /// the next begins); reads past it are fetched as asked.
    public var bytes: Range<Int64>
    /// The video stream's id in the container (an MPEG-TS PID, an MXF track number).
    public var stream: Int

    /// Bytes fetched past the start of a stream's last packet.
    public static let lastFrameRoom: Int64 = 8 << 20

    public init(objectSize: Int64, bytes: Range<Int64>, stream: Int) {
        self.objectSize = objectSize
        self.bytes = bytes
        self.stream = stream
    }

    /// The stretch for packets `first...last` of a stream whose packets start at `positions` (decode order): up
    /// to where the third packet after the last starts, or for the stream's last packets `lastFrameRoom` past the
    /// last one's start (what follows the video may be long: reads past the stretch are fetched as asked).
    public static func covering(_ first: Int, _ last: Int, positions: [Int64], objectSize: Int64, stream: Int) -> DemuxedStretch {
        let start = positions[first]
        let after = positions.indices.contains(last + 3) ? positions[(last + 1)...(last + 3)].max()!
            : positions[first...last].max()! + lastFrameRoom
        return DemuxedStretch(objectSize: objectSize, bytes: start..<min(objectSize, max(after, start + 1)), stream: stream)
    }
}
