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
        /// The pass of a two-pass job (`EncoderSettings.twoPass`); nil: a one-pass encode.
        public var pass: PassInput?
        /// False: the encoder makes no IDR of its own, scene detection off (`JobPlan.sceneCuts(of:)`); nil: libx264's.
        public var sceneCuts: Bool?
        /// A ladder job's rungs, the first being `output` and `settings`: each kept frame is scaled and encoded
        /// once per rung; nil: one output.
        public var rungs: [RungEncoding]?
        /// Output ticks where every rung must make an IDR (a ladder's packaging cuts inside the segment).
        public var forcedKeyframes: [Int64]?
        /// True: the encode must give the same bytes on every worker alike (an audited job), even with more than one
        /// libx264 thread (`SegmentEncoder.encoderConfig`); nil: repeatable with one thread only.
        public var repeatable: Bool?
        /// The packets' bytes are read by the worker from object storage (their records carry none); nil: in the payload.
        public var source: SourceRanges?
    }

    /// One rung of a ladder task: its picture, its encoder settings and, in two passes, its own pass.
    public struct RungEncoding: Codable, Hashable, Sendable {
        public var output: VideoOutputFormat
        public var settings: EncoderSettings
        /// The rung's pass of a two-pass ladder (the first rung's is also the header's `pass`); nil in one pass.
        public var pass: PassInput?

        public init(output: VideoOutputFormat, settings: EncoderSettings, pass: PassInput? = nil) {
            self.output = output
            self.settings = settings
            self.pass = pass
        }
    }

    public var header: Header
    public var packets: [MediaPacket]

    public init(jobID: String, segment: PlannedSegment, timeBase: Rational, codec: CodecParameters,
                output: VideoOutputFormat, settings: EncoderSettings, runOut: RunOut? = nil, leadIn: Int? = nil,
                pass: PassInput? = nil, sceneCuts: Bool? = nil, rungs: [RungEncoding]? = nil, forcedKeyframes: [Int64]? = nil,
                repeatable: Bool? = nil, source: SourceRanges? = nil, packets: [MediaPacket]) {
        header = Header(jobID: jobID, segment: segment, timeBase: timeBase, codec: codec, output: output, settings: settings,
                        runOut: runOut, leadIn: leadIn, pass: pass, sceneCuts: sceneCuts, rungs: rungs, forcedKeyframes: forcedKeyframes,
                        repeatable: repeatable, source: source)
        self.packets = packets
    }

    /// Sets every rung's encoder threads: the worker's `own` count, or the segment's where its plan gave it more
    /// (a job's tail, `PlannedSegment.encoderThreads`), so that every encode of the segment takes the same.
    public mutating func setThreads(own: Int) {
        let threads = max(own, header.segment.encoderThreads ?? 1)
        header.settings.threads = threads
        header.rungs = header.rungs?.map { var rung = $0; rung.settings.threads = threads; return rung }
    }

    /// A pass is the first or the second; a second pass has its statistics and a bitrate.
    static func isValid(_ pass: PassInput) -> Bool {
        (1...2).contains(pass.pass) && (pass.pass == 1 || (pass.stats != nil && (pass.bitrate ?? 0) > 0))
    }

    public init(validating header: Header, packets: [MediaPacket]) throws(PayloadError) {
        let s = header.segment
        guard s.index >= 0, s.firstPacket >= 0, s.lastPacket >= s.firstPacket, s.frameCount > 0, s.endPTS > s.startPTS,
              header.timeBase.isValid, header.output.width > 0, header.output.height > 0 else {
            throw .badHeader("segment fields out of range")
        }
        if let threads = s.encoderThreads, !(1...64).contains(threads) { throw .badHeader("encoder threads out of range") }
        if let runOut = header.runOut, runOut.packets < 1 || runOut.endPTS <= s.endPTS {
            throw .badHeader("run-out fields out of range")
        }
        if let pass = header.pass, !Self.isValid(pass) { throw .badHeader("pass fields out of range") }
        if let leadIn = header.leadIn, !(0...EncoderSettings.maximumLeadIn).contains(leadIn) {
            throw .badHeader("lead-in out of range")
        }
        if let rungs = header.rungs {
            guard (1...Ladder.maximumRungs).contains(rungs.count), rungs.first?.output == header.output,
                  rungs.allSatisfy({ $0.output.width > 0 && $0.output.height > 0 && $0.output.timeBase == header.output.timeBase }) else {
                throw .badHeader("rungs out of range")
            }
            // Every rung in the header's pass, or none in a pass.
            guard rungs.allSatisfy({ $0.pass?.pass == header.pass?.pass && $0.pass.map(Self.isValid) != false }),
                  header.pass == nil || rungs.first?.pass == header.pass else {
                throw .badHeader("rung passes out of range")
            }
        }
        if let forced = header.forcedKeyframes, forced.count > s.frameCount || !zip(forced, forced.dropFirst()).allSatisfy({ $0 < $1 }) {
            throw .badHeader("forced keyframes out of range")
        }
        // Counted without trapping: the fields are a peer's, and may be anything.
        let (last, past) = s.lastPacket.addingReportingOverflow(header.runOut?.packets ?? 0)
        let (span, below) = last.subtractingReportingOverflow(s.firstPacket)
        guard !past, !below, span < Int.max else { throw .badHeader("packet indices out of range") }
        // The encoder counts ticks across the shown range: a span that overflows is refused here.
        guard !s.endPTS.subtractingReportingOverflow(s.startPTS).overflow,
              !(header.runOut?.endPTS.subtractingReportingOverflow(s.startPTS).overflow ?? false) else {
            throw .badHeader("timestamps out of range")
        }
        guard packets.count == span + 1 else {
            throw .badHeader("\(packets.count) packets for a segment of \(span + 1)")
        }
        if let source = header.source, !source.isValid(packets: packets.count) || packets.contains(where: { !$0.data.isEmpty }) {
            throw .badHeader("source ranges out of range")
        }
        self.header = header
        self.packets = packets
    }
}
