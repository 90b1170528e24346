/// A worker's result: the encoded packets of one segment with their timestamps, and the encoder's
/// extradata (SPS/PPS), which the stitcher compares across segments.
public struct EncodedSegment: BlobPayload {
    public static let magic = "TRES"

    public struct Header: Codable, Hashable, Sendable {
        public var jobID: String
        public var index: Int
        public var timeBase: Rational
        @HexBytes public var extradata: [UInt8]
        public var frameCount: Int
        /// Frames the decoder produced, kept or dropped (pre-roll and leading pictures included).
        public var decodedFrames: Int
        public var encodeSeconds: Double
        /// A first pass's statistics, in place of packets (a two-pass job's first pass).
        public var firstPass: FirstPassOutput?
    }

    public var header: Header
    public var packets: [MediaPacket]

    public init(jobID: String, index: Int, timeBase: Rational, extradata: [UInt8], frameCount: Int,
                decodedFrames: Int, encodeSeconds: Double, firstPass: FirstPassOutput? = nil, packets: [MediaPacket]) {
        header = Header(jobID: jobID, index: index, timeBase: timeBase, extradata: extradata,
                        frameCount: frameCount, decodedFrames: decodedFrames, encodeSeconds: encodeSeconds, firstPass: firstPass)
        self.packets = packets
    }

    public init(validating header: Header, packets: [MediaPacket]) throws(PayloadError) {
        try Self.validate(header, packets: packets.count)
        self.header = header
        self.packets = packets
    }

    static func validate(_ header: Header, packets: Int) throws(PayloadError) {
        guard header.index >= 0, header.frameCount > 0, header.timeBase.isValid else { throw .badHeader("result fields out of range") }
        guard packets == (header.firstPass == nil ? header.frameCount : 0) else { throw .badHeader("\(packets) packets for \(header.frameCount) frames") }
    }

    /// A serialized result's header and checksum, after every check `init(serialized:)` makes, without
    /// copying its packets: what the coordinator needs of a result it only spools.
    public static func checkedHeader(_ bytes: [UInt8]) throws(PayloadError) -> (header: Header, checksum: UInt64) {
        let result: Result<(header: Header, checksum: UInt64), PayloadError> = bytes.withUnsafeBytes { raw in
            Result { () throws(PayloadError) in try checkedHeader(raw) }
        }
        return try result.get()
    }

    /// As `checkedHeader`, from bytes wherever they are (a received message's buffer).
    public static func checkedHeader(_ bytes: UnsafeRawBufferPointer) throws(PayloadError) -> (header: Header, checksum: UInt64) {
        let (headerBytes, packets, checksum) = try Blob.check(magic: magic, bytes)
        let header = try decodeHeader(headerBytes)
        try validate(header, packets: packets)
        return (header, checksum)
    }
}
