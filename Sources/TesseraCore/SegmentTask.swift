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

    /// The serialized payload and its checksum, as result messages and the store write it (the
    /// blob's own trailer, so nothing is read twice).
    public func serializedWithChecksum() -> (bytes: [UInt8], checksum: String) {
        let bytes = serialized()
        return (bytes, PayloadChecksum.hex(Blob.storedChecksum(bytes) ?? 0))
    }

    public init(serialized bytes: [UInt8]) throws(PayloadError) {
        let result: Result<Self, PayloadError> = bytes.withUnsafeBytes { raw in
            Result { () throws(PayloadError) in try Self(serializedBytes: raw) }
        }
        self = try result.get()
    }

    /// As `init(serialized:)`, from bytes wherever they are (a received message's buffer, read in place).
    public init(serializedBytes bytes: UnsafeRawBufferPointer) throws(PayloadError) {
        let (headerBytes, packets) = try Blob.decode(magic: Self.magic, bytes)
        try self.init(validating: try Self.decodeHeader(headerBytes), packets: packets)
    }

    static func decodeHeader(_ bytes: [UInt8]) throws(PayloadError) -> Header {
        do {
            return try CanonicalJSON.decode(Header.self, from: bytes)
        } catch {
            throw .badHeader(String(describing: error))
        }
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
        /// Frames after the segment shown to the encoder but not kept; their packets follow the segment's.
        public var runOut: RunOut?
        /// Flat frames shown to the encoder before the segment's first frame, which is then forced to an
        /// IDR, and dropped (see `EncoderSettings.leadInFrames`); nil or 0: none.
        public var leadIn: Int?
    }

    public var header: Header
    public var packets: [MediaPacket]

    public init(jobID: String, segment: PlannedSegment, timeBase: Rational, codec: CodecParameters,
                output: VideoOutputFormat, settings: EncoderSettings, runOut: RunOut? = nil, leadIn: Int? = nil,
                packets: [MediaPacket]) {
        header = Header(jobID: jobID, segment: segment, timeBase: timeBase, codec: codec, output: output, settings: settings,
                        runOut: runOut, leadIn: leadIn)
        self.packets = packets
    }

    public init(validating header: Header, packets: [MediaPacket]) throws(PayloadError) {
        let s = header.segment
        guard s.index >= 0, s.firstPacket >= 0, s.lastPacket >= s.firstPacket, s.frameCount > 0, s.endPTS > s.startPTS,
              header.timeBase.isValid, header.output.width > 0, header.output.height > 0 else {
            throw .badHeader("segment fields out of range")
        }
        if let runOut = header.runOut, runOut.packets < 1 || runOut.endPTS <= s.endPTS {
            throw .badHeader("run-out fields out of range")
        }
        if let leadIn = header.leadIn, !(0...EncoderSettings.maximumLeadIn).contains(leadIn) {
            throw .badHeader("lead-in out of range")
        }
        let shipped = s.shippedPackets(header.runOut)
        guard packets.count == shipped else {
            throw .badHeader("\(packets.count) packets for a segment of \(shipped)")
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
        @HexBytes public var extradata: [UInt8]
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
        try Self.validate(header, packets: packets.count)
        self.header = header
        self.packets = packets
    }

    static func validate(_ header: Header, packets: Int) throws(PayloadError) {
        guard header.index >= 0, header.frameCount > 0, header.timeBase.isValid else { throw .badHeader("result fields out of range") }
        guard packets == header.frameCount else { throw .badHeader("\(packets) packets for \(header.frameCount) frames") }
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
