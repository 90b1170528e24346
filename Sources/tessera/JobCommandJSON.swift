import Foundation
import TesseraCore
import TesseraEngine
import TesseraStore

/// `submit --json`: the job as `status --json` shows it, with what submitting it planned.
struct SubmittedJob: Encodable {
    let job: JobRecord
    /// What the job leaves: the output file, a streaming ladder's folder, or each rung's file.
    let places: [String]
    /// A ladder's rungs and packaging in one line (`rungs 720p, 360p; HLS, 6 s segments`); nil for one output.
    let ladderSummary: String?

    init(_ job: JobRecord) {
        self.job = job
        let ladder = job.spec.ladder
        places = ladder?.packaging.isStreaming == true ? [OutputPath.streamingFolder(of: job.output)] : job.spec.writtenPaths(for: job.output)
        ladderSummary = ladder?.summary
    }

    enum CodingKeys: String, CodingKey { case places, ladderSummary }

    func encode(to encoder: Encoder) throws {
        try job.encode(to: encoder)
        // The same encoder hands back the object the job just wrote into.
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(places, forKey: .places)
        try c.encode(ladderSummary, forKey: .ladderSummary)
    }
}

/// `cancel --json`: the jobs this command canceled, and those named that had already ended.
struct CancelOutcome: Encodable {
    var canceled: [String] = []
    var alreadyEnded: [String] = []
}

/// `prune --json`: the jobs removed, and the age asked for in seconds.
struct PruneOutcome: Encodable {
    let removed: [String]
    let olderThanSeconds: Double
}
