/// One planned segment: the frames whose pts fall in [startPTS, endPTS), and the packets in decode
/// order (`firstPacket...lastPacket`) that a decoder needs to produce exactly those frames.
public struct PlannedSegment: Codable, Hashable, Sendable {
    public var index: Int
    public var startPTS: Int64
    /// Exclusive.
    public var endPTS: Int64
    public var firstPacket: Int
    public var lastPacket: Int
    /// Frames the segment must yield.
    public var frameCount: Int
    /// Packets decoded before the first kept one only to reach it (from an earlier random-access point).
    public var preRollPackets: Int
    /// What the first shipped packet is.
    public var entry: RandomAccess
    /// libx264 threads the segment's encode takes at least: the plan's tail, when the encoders would otherwise
    /// idle while it runs (`CutPlanner+Tail`); fixed in the plan so that every encode of it gives the same bytes.
    /// Nil: the worker's own.
    public var encoderThreads: Int?

    public init(index: Int, startPTS: Int64, endPTS: Int64, firstPacket: Int, lastPacket: Int, frameCount: Int,
                preRollPackets: Int, entry: RandomAccess, encoderThreads: Int? = nil) {
        self.index = index
        self.startPTS = startPTS
        self.endPTS = endPTS
        self.firstPacket = firstPacket
        self.lastPacket = lastPacket
        self.frameCount = frameCount
        self.preRollPackets = preRollPackets
        self.entry = entry
        self.encoderThreads = encoderThreads
    }

    public var packetCount: Int { lastPacket - firstPacket + 1 }
}

/// How a stream's random-access points are built.
public enum GOPStructure: String, Codable, Sendable {
    case closedGOP = "closed-gop"
    case openGOP = "open-gop"
    case intraOnly = "intra-only"
    case keyframes
}

/// The cut plan for a video stream.
public struct CutPlan: Codable, Hashable, Sendable {
    public var timeBase: Rational
    public var segments: [PlannedSegment]
    /// Frames the output must hold, in order: every frame the source shows, once.
    public var frameCount: Int
    /// pts of the first shown frame: the origin of the output.
    public var firstPTS: Int64
    /// pts just past the last shown frame (its pts plus its duration).
    public var endPTS: Int64
    public var structure: GOPStructure
    public var randomAccessPoints: Int
    /// Packets flagged key by the demuxer that are not random-access points (recovery frames without SEI, ...).
    public var keyFlagsNotRandomAccess: Int
    /// Decode-order packets before the first random-access point, which cannot be shown.
    public var undecodableLeadingPackets: Int
    public var totalPreRollPackets: Int
    public var targetSegmentFrames: Int
    /// Where a whole-file encode would put IDR frames (pts), when the plan cut only there, and the scene
    /// changes that forecast came from; nil when a segment length was asked for.
    public var forecastKeyframes: [Int64]?
    public var sceneChanges: [Int64]?
    /// A ladder job's packaging cuts (pts, the first frame excluded): every rung has an IDR at each, the plan's
    /// segment starts among them; nil for a single output.
    public var packagingCuts: [Int64]?

    public var durationSeconds: Double { timeBase.seconds(endPTS - firstPTS) }
    /// Extra decode work from pre-roll, as a share of the frames encoded.
    public var preRollRatio: Double { frameCount == 0 ? 0 : Double(totalPreRollPackets) / Double(frameCount) }
}

public struct PlanOptions: Sendable, Hashable {
    /// Segment length in seconds as asked for; rounded to a multiple of `keyint` frames when it is longer
    /// than one, and cut wherever it needs. Nil: cut only where a whole-file encode puts IDR frames, about
    /// `defaultSegmentSeconds` apart.
    public var segmentSeconds: Double?
    /// The output's maximum GOP length in frames.
    public var keyint: Int
    /// The shortest interval between IDR frames the encoder puts at scene changes (x264's `keyint-min`), in
    /// frames; nil: x264's own choice, a tenth of `keyint` and at most a second.
    public var keyintMinimum: Int?
    /// Whether the encoder puts IDR frames at scene changes (every x264 preset but ultrafast).
    public var detectsScenes = true
    /// The encoder's B-frames: with any, libx264 takes no flash for a scene cut.
    public var bframes = 3
    /// Whether the encode is at a constant quality (CRF): then no extra cut goes into grain
    /// (`DecodedScenes.grain`). With a bitrate, the first pass spreads the bits over the segments.
    public var constantQuality = true
    /// Scene changes found by decoding where the keyframes say nothing or little about them.
    public var decodedScenes: DecodedScenes?
    /// What one IDR frame a whole-file encode would not have made adds to the output, as a share of its
    /// size; with `extraCutBudget`, how many such cuts a plan at keyframes may add to keep every encoder
    /// busy. Nil: estimated from the source (`CutPlanner.estimatedCostOfAnExtraCut`).
    public var costOfAnExtraCut: Double?
    /// The share of the output a plan at keyframes may spend on extra cuts.
    public var extraCutBudget = 0.005
    /// Cut into at least this many segments when the input is long enough (keeps every encoder busy).
    public var minimumSegments: Int
    /// Shortest segment the planner makes to reach `minimumSegments`, in seconds.
    public var minimumSegmentSeconds: Double
    /// Upper bound on pre-roll decode work as a share of the frames encoded.
    public var maxPreRollRatio: Double
    /// Encoders working on the job at once: the plan balances its segments over them.
    public var encoders: Int = 1
    /// About this many segments (`SegmentationRule`'s choice under load): at forecast keyframes only,
    /// unbalanced, or equal pieces cut wherever they fall when it says `anywhere`; nil: as many as keep
    /// `encoders` busy. Ignored when a segment length was asked for.
    public var segmentation: Segmentation?
    /// What decoding a frame costs against encoding one, when choosing where to balance: a cut away from
    /// the source's keyframes makes its segment's worker decode from the one before (x264 veryfast at
    /// 720p: decoding is about an eighth of the encode).
    public var preRollWeight = 0.2

    /// About how long segments of a plan at keyframes are, in seconds.
    public static let defaultSegmentSeconds = 8.0

    public init(segmentSeconds: Double? = 8, keyint: Int = 250, minimumSegments: Int = 1,
                minimumSegmentSeconds: Double = 1, maxPreRollRatio: Double = 1.5) {
        self.segmentSeconds = segmentSeconds
        self.keyint = keyint
        self.minimumSegments = minimumSegments
        self.minimumSegmentSeconds = minimumSegmentSeconds
        self.maxPreRollRatio = maxPreRollRatio
    }
}

public enum PlanError: Error, Equatable, CustomStringConvertible {
    case noFrames
    case noTimestamps
    case noRandomAccessPoint
    case duplicateTimestamp(Int64)
    /// Decode timestamps that go back by more than a second (from, to, in seconds) at a video packet: files joined
    /// end to end (`cat a.ts b.ts`), each starting its clock again.
    case timestampsRestart(packet: Int, from: Double, to: Double)
    /// Pictures without a pts whose display times could not be worked out (`PresentationTimes`).
    case missingTimestamps(Int)

    public var description: String {
        switch self {
        case .noFrames: return "the video stream has no frames with timestamps"
        case .noTimestamps: return "the video packets carry no timestamps and the stream gives no frame rate (ffmpeg -r RATE -i FILE -c copy OUT.mp4 gives it both)"
        case .noRandomAccessPoint: return "the video stream has no random-access point (no IDR, recovery point or intra frame)"
        case .duplicateTimestamp(let pts): return "two video frames share the presentation timestamp \(pts)"
        case .timestampsRestart(let packet, let from, let to):
            return "its timestamps go back from \(String(format: "%.2f", from)) s to \(String(format: "%.2f", to)) s at video packet \(packet) "
                + "(recordings joined end to end?); ffmpeg -i FILE -c copy OUT.ts rewrites them continuous"
        case .missingTimestamps(let count):
            return "\(count) video pictures carry no presentation timestamp and their display times cannot be worked out from the others'"
        }
    }
}
