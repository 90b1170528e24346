/// Everything a worker needs to encode one segment, self-contained: the source codec parameters, the
/// packets in decode order, the pts range to keep, the frozen output format and encoder settings.
public struct SegmentTask: Hashable, Sendable {
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

    public func serialized() -> [UInt8] {
        Blob.encode(magic: Self.magic, header: CanonicalJSON.data(header), packets: packets)
    }

    public init(serialized bytes: [UInt8]) throws(PayloadError) {
        let (headerBytes, packets) = try Blob.decode(magic: Self.magic, bytes)
        do {
            header = try CanonicalJSON.decode(Header.self, from: headerBytes)
        } catch {
            throw .badHeader(String(describing: error))
        }
        guard packets.count == header.segment.packetCount else {
            throw .badHeader("\(packets.count) packets for a segment of \(header.segment.packetCount)")
        }
        self.packets = packets
    }
}

/// A worker's result: the encoded packets of one segment with their timestamps, and the encoder's
/// extradata (SPS/PPS), which the stitcher compares across segments.
public struct EncodedSegment: Hashable, Sendable {
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

    public func serialized() -> [UInt8] {
        Blob.encode(magic: Self.magic, header: CanonicalJSON.data(header), packets: packets)
    }

    public init(serialized bytes: [UInt8]) throws(PayloadError) {
        let (headerBytes, packets) = try Blob.decode(magic: Self.magic, bytes)
        do {
            header = try CanonicalJSON.decode(Header.self, from: headerBytes)
        } catch {
            throw .badHeader(String(describing: error))
        }
        guard packets.count == header.frameCount else {
            throw .badHeader("\(packets.count) packets for \(header.frameCount) frames")
        }
        self.packets = packets
    }
}
