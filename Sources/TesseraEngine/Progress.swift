/// Where a job is, for a progress bar or plain progress lines.
public struct TranscodeProgress: Sendable {
    public enum Phase: String, Sendable {
        case queued, probing, planning, encoding, stitching, verifying, done, failed, canceled
    }

    public var phase: Phase
    public var segmentsDone: Int
    public var segmentsTotal: Int
    public var framesDone: Int
    public var framesTotal: Int

    public init(phase: Phase, segmentsDone: Int, segmentsTotal: Int, framesDone: Int, framesTotal: Int) {
        self.phase = phase
        self.segmentsDone = segmentsDone
        self.segmentsTotal = segmentsTotal
        self.framesDone = framesDone
        self.framesTotal = framesTotal
    }

    public var fraction: Double { framesTotal == 0 ? 0 : Double(framesDone) / Double(framesTotal) }
}
