import TesseraCore
import TesseraEngine
import TesseraStore

extension TranscodeProgress.Phase {
    /// The phase a job in the store is in.
    public init(_ state: JobState) {
        switch state {
        case .queued: self = .queued
        case .planning: self = .planning
        case .encoding: self = .encoding
        case .stitching: self = .stitching
        case .done: self = .done
        case .failed: self = .failed
        case .canceled: self = .canceled
        }
    }
}

extension TranscodeProgress {
    /// Where a job in the store is.
    public init(_ job: JobRecord) {
        self.init(phase: Phase(job.state), segmentsDone: job.segmentsDone, segmentsTotal: job.segmentsTotal,
                  framesDone: Int(job.framesDone), framesTotal: Int(job.framesTotal), fps: job.fps, speed: job.speed,
                  etaSeconds: job.etaSeconds, pass: job.pass)
    }
}
