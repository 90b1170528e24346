import Foundation

/// Where a coordinator's time went, in seconds, for `tessera transcode --json` and `bench/run`.
///
/// Each phase is time spent on the coordinator's own threads (and, for `startup`, `shutdown` and
/// `cliProbeAndPlan`, in the `tessera transcode` process around it). `database` is every wait on the
/// job store, and is left out of the other phases, so no second is counted twice. The loop phases
/// (`payloadPacking`, `dispatch`, `results`, `bookkeeping`) run while workers encode; the others are
/// serial parts of a job's wall time.
public struct PhaseTimings: Codable, Hashable, Sendable {
    public var startup: Double = 0
    public var cliProbeAndPlan: Double = 0
    public var probeAndPlan: Double = 0
    /// Reading a segment's packets from the input and serialising the task.
    public var payloadPacking: Double = 0
    /// Sending tasks to workers.
    public var dispatch: Double = 0
    /// Checking, spooling and recording results.
    public var results: Double = 0
    /// Heartbeats, sweeps, liveness.
    public var bookkeeping: Double = 0
    public var audio: Double = 0
    /// Muxing the segments and the audio into a faststart MP4 (the rewrite that moves moov included).
    public var stitch: Double = 0
    public var verification: Double = 0
    public var database: Double = 0
    public var shutdown: Double = 0
    /// From the first task sent to the last result received.
    public var encodingWall: Double = 0
    /// The workers' own encode seconds, summed over segments.
    public var workerEncode: Double = 0
    public var segmentsDispatched: Int = 0
    public var payloadBytes: Int64 = 0
    public var resultBytes: Int64 = 0

    public init() {}

    /// Every phase but encoding, summed.
    public var overhead: Double {
        startup + cliProbeAndPlan + probeAndPlan + payloadPacking + dispatch + results + bookkeeping + audio + stitch
            + verification + database + shutdown
    }
}

/// A monotonic clock in seconds, and a way to add a body's duration to a total.
public enum Stopwatch {
    public static var now: Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    public static func time<R, E: Error>(_ total: inout Double, _ body: () throws(E) -> R) throws(E) -> R {
        let started = now
        defer { total += now - started }
        return try body()
    }
}
