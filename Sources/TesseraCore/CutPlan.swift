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

    public init(index: Int, startPTS: Int64, endPTS: Int64, firstPacket: Int, lastPacket: Int, frameCount: Int,
                preRollPackets: Int, entry: RandomAccess) {
        self.index = index
        self.startPTS = startPTS
        self.endPTS = endPTS
        self.firstPacket = firstPacket
        self.lastPacket = lastPacket
        self.frameCount = frameCount
        self.preRollPackets = preRollPackets
        self.entry = entry
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

    public var durationSeconds: Double { timeBase.seconds(endPTS - firstPTS) }
    /// Extra decode work from pre-roll, as a share of the frames encoded.
    public var preRollRatio: Double { frameCount == 0 ? 0 : Double(totalPreRollPackets) / Double(frameCount) }
}

public struct PlanOptions: Sendable, Hashable {
    /// Wanted segment length in seconds; rounded to a multiple of `keyint` frames when it is longer than one.
    public var segmentSeconds: Double
    /// The output's maximum GOP length in frames.
    public var keyint: Int
    /// Cut into at least this many segments when the input is long enough (keeps every encoder busy).
    public var minimumSegments: Int
    /// Shortest segment the planner makes to reach `minimumSegments`, in seconds.
    public var minimumSegmentSeconds: Double
    /// Upper bound on pre-roll decode work as a share of the frames encoded.
    public var maxPreRollRatio: Double
    /// Encoders working on the job at once: the plan balances its segments over them.
    public var encoders: Int = 1

    public init(segmentSeconds: Double = 8, keyint: Int = 250, minimumSegments: Int = 1,
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

    public var description: String {
        switch self {
        case .noFrames: return "the video stream has no frames with timestamps"
        case .noTimestamps: return "the video packets carry no timestamps (a raw elementary stream? put it in a container first)"
        case .noRandomAccessPoint: return "the video stream has no random-access point (no IDR, recovery point or intra frame)"
        case .duplicateTimestamp(let pts): return "two video frames share the presentation timestamp \(pts)"
        }
    }
}
