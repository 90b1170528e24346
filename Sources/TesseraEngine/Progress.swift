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
    /// Frames per second and that as a multiple of real time, over the last seconds; nil until known.
    public var fps: Double?
    public var speed: Double?
    /// Seconds left at that rate; nil until known.
    public var etaSeconds: Double?
    /// A two-pass job's pass (1 or 2), whose frames count from 0 each; nil in one pass.
    public var pass: Int?

    public init(phase: Phase, segmentsDone: Int, segmentsTotal: Int, framesDone: Int, framesTotal: Int,
                fps: Double? = nil, speed: Double? = nil, etaSeconds: Double? = nil, pass: Int? = nil) {
        self.phase = phase
        self.segmentsDone = segmentsDone
        self.segmentsTotal = segmentsTotal
        self.framesDone = framesDone
        self.framesTotal = framesTotal
        self.fps = fps
        self.speed = speed
        self.etaSeconds = etaSeconds
        self.pass = pass
    }

    /// What the job is doing, for people: the phase, or while encoding in two passes, which pass.
    public var label: String {
        guard phase == .encoding, let pass else { return phase.rawValue }
        return pass == 1 ? "first pass" : "second pass"
    }

    public var fraction: Double { framesTotal == 0 ? 0 : Double(framesDone) / Double(framesTotal) }
}
