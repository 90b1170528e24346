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
        /// A ladder task's rungs, in the task's order: rung `r`'s packets are the `r`-th run of `frameCount`
        /// packets, and `extradata` is `RungHeaders.combined` of theirs. Nil: one output.
        public var rungs: [RungHeaders]?
    }

    /// One rung's encoder headers (SPS/PPS) and, in a two-pass ladder's first pass, its statistics.
    public struct RungHeaders: Codable, Hashable, Sendable {
        @HexBytes public var extradata: [UInt8]
        /// The rung's first-pass statistics (the first rung's are also the header's `firstPass`).
        public var firstPass: FirstPassOutput?

        public init(extradata: [UInt8], firstPass: FirstPassOutput? = nil) {
            self.extradata = extradata
            self.firstPass = firstPass
        }

        /// Every rung's headers in one byte string, each after its length (4 bytes, little-endian): what a ladder
        /// job's results are compared by, as a single output's by its SPS/PPS.
        public static func combined(_ headers: [[UInt8]]) -> [UInt8] {
            headers.flatMap { bytes in withUnsafeBytes(of: UInt32(bytes.count).littleEndian, Array.init) + bytes }
        }
    }

    /// Rung `r` of a ladder result as a single output's result: its headers and its packets.
    public func rung(_ r: Int) -> EncodedSegment {
        guard let rungs = header.rungs else { return self }
        var one = self
        one.header.rungs = nil
        one.header.extradata = rungs[r].extradata
        one.header.firstPass = rungs[r].firstPass
        let count = header.firstPass == nil ? header.frameCount : 0
        one.packets = Array(packets[(r * count)..<((r + 1) * count)])
        return one
    }

    /// How many outputs the result holds.
    public var rungCount: Int { header.rungs?.count ?? 1 }

    public var header: Header
    public var packets: [MediaPacket]

    public init(jobID: String, index: Int, timeBase: Rational, extradata: [UInt8], frameCount: Int,
                decodedFrames: Int, encodeSeconds: Double, firstPass: FirstPassOutput? = nil, rungs: [RungHeaders]? = nil,
                packets: [MediaPacket]) {
        header = Header(jobID: jobID, index: index, timeBase: timeBase, extradata: extradata,
                        frameCount: frameCount, decodedFrames: decodedFrames, encodeSeconds: encodeSeconds, firstPass: firstPass,
                        rungs: rungs)
        self.packets = packets
    }

    public init(validating header: Header, packets: [MediaPacket]) throws(PayloadError) {
        try Self.validate(header, packets: packets.count)
        self.header = header
        self.packets = packets
    }

    static func validate(_ header: Header, packets: Int) throws(PayloadError) {
        guard header.index >= 0, header.frameCount > 0, header.timeBase.isValid else { throw .badHeader("result fields out of range") }
        let outputs = header.rungs?.count ?? 1
        guard (1...Ladder.maximumRungs).contains(outputs) else { throw .badHeader("\(outputs) rungs") }
        if let rungs = header.rungs, header.extradata != RungHeaders.combined(rungs.map(\.extradata))
            || rungs.first?.firstPass != header.firstPass || rungs.contains(where: { ($0.firstPass == nil) != (header.firstPass == nil) }) {
            throw .badHeader("rung headers do not match the result's")
        }
        guard packets == (header.firstPass == nil ? header.frameCount * outputs : 0) else {
            throw .badHeader("\(packets) packets for \(header.frameCount) frames in \(outputs) output\(outputs == 1 ? "" : "s")")
        }
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
