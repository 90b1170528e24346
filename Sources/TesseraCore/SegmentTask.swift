/// A payload that travels as a blob: a Codable header plus packets, framed by `Blob`.
public protocol BlobPayload: Hashable, Sendable {
    associatedtype Header: Codable, Hashable, Sendable
    static var magic: String { get }
    var header: Header { get }
    var packets: [MediaPacket] { get }
    init(validating header: Header, packets: [MediaPacket]) throws(PayloadError)
}

extension BlobPayload {
    public func serialized() -> [UInt8] {
        Blob.encode(magic: Self.magic, header: CanonicalJSON.data(header), packets: packets)
    }

    public init(serialized bytes: [UInt8]) throws(PayloadError) {
        let (headerBytes, packets) = try Blob.decode(magic: Self.magic, bytes)
        let header: Header
        do {
            header = try CanonicalJSON.decode(Header.self, from: headerBytes)
        } catch {
            throw .badHeader(String(describing: error))
        }
        try self.init(validating: header, packets: packets)
    }
}

/// Everything a worker needs to encode one segment, self-contained: the source codec parameters, the
/// packets in decode order, the pts range to keep, the frozen output format and encoder settings.
public struct SegmentTask: BlobPayload {
    public static let magic = "TSEG"

    public struct Header: Codable, Hashable, Sendable {
        public var jobID: String
        public var segment: PlannedSegment
        public var timeBase: Rational
        public var codec: CodecParameters
        public var output: VideoOutputFormat
        public var settings: EncoderSettings
    }

    public var header: Header
    public var packets: [MediaPacket]

    public init(jobID: String, segment: PlannedSegment, timeBase: Rational, codec: CodecParameters,
                output: VideoOutputFormat, settings: EncoderSettings, packets: [MediaPacket]) {
        header = Header(jobID: jobID, segment: segment, timeBase: timeBase, codec: codec, output: output, settings: settings)
        self.packets = packets
    }

    public init(validating header: Header, packets: [MediaPacket]) throws(PayloadError) {
        let s = header.segment
        guard s.index >= 0, s.firstPacket >= 0, s.lastPacket >= s.firstPacket, s.frameCount > 0, s.endPTS > s.startPTS,
              header.timeBase.isValid, header.output.width > 0, header.output.height > 0 else {
            throw .badHeader("segment fields out of range")
        }
        guard packets.count == header.segment.packetCount else {
            throw .badHeader("\(packets.count) packets for a segment of \(header.segment.packetCount)")
        }
        self.header = header
        self.packets = packets
    }
}

/// A worker's result: the encoded packets of one segment with their timestamps, and the encoder's
/// extradata (SPS/PPS), which the stitcher compares across segments.
public struct EncodedSegment: BlobPayload {
    public static let magic = "TRES"

    public struct Header: Codable, Hashable, Sendable {
        public var jobID: String
        public var index: Int
        public var timeBase: Rational
        public var extradata: [UInt8]
        public var frameCount: Int
        /// Frames the decoder produced, kept or dropped (pre-roll and leading pictures included).
        public var decodedFrames: Int
        public var encodeSeconds: Double
    }

    public var header: Header
    public var packets: [MediaPacket]

    public init(jobID: String, index: Int, timeBase: Rational, extradata: [UInt8], frameCount: Int,
                decodedFrames: Int, encodeSeconds: Double, packets: [MediaPacket]) {
        header = Header(jobID: jobID, index: index, timeBase: timeBase, extradata: extradata,
                        frameCount: frameCount, decodedFrames: decodedFrames, encodeSeconds: encodeSeconds)
        self.packets = packets
    }

    public init(validating header: Header, packets: [MediaPacket]) throws(PayloadError) {
        guard header.index >= 0, header.frameCount > 0, header.timeBase.isValid else { throw .badHeader("result fields out of range") }
        guard packets.count == header.frameCount else {
            throw .badHeader("\(packets.count) packets for \(header.frameCount) frames")
        }
        self.header = header
        self.packets = packets
    }
}
