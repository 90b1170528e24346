/// Where a job is, for a progress bar or plain progress lines.
public struct TranscodeProgress: Sendable {
    public enum Phase: String, Sendable {
        case probing, planning, encoding, stitching, verifying, done
    }

    public var phase: Phase
    public var segmentsDone: Int
    public var segmentsTotal: Int
    public var framesDone: Int
    public var framesTotal: Int

    public var fraction: Double { framesTotal == 0 ? 0 : Double(framesDone) / Double(framesTotal) }
}
