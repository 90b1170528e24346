import Foundation

/// Where a coordinator's time went, in seconds, for `tessera transcode --json` and `bench/run`.
///
/// The serial phases (`startup`, `cliProbeAndPlan`, `probeAndPlan`, `audio`, `stitch`, `verification`,
/// `shutdown`) are wall time: nothing else of the job happens meanwhile. The loop phases
/// (`payloadPacking`, `dispatch`, `results`, `bookkeeping`) run on the coordinator's thread (results
/// also on the result spooler's) while the workers encode, so what they cost the job is the processor
/// time they take from the encoders: they are those threads' CPU time (wall time there would count
/// every moment a thread waited for a core the encoders held). `database` is every wait on the job store in wall time, serial or not, and is
/// left out of the other phases; the loop's look at notifications already received (no round trip)
/// is bookkeeping.
public struct PhaseTimings: Codable, Hashable, Sendable {
    public var startup: Double = 0
    public var cliProbeAndPlan: Double = 0
    public var probeAndPlan: Double = 0
    /// Decoding to find scene changes the keyframes do not show (`SceneAnalysis`), before planning.
    public var sceneAnalysis: Double = 0
    /// Reading a segment's packets from the input and serialising the task.
    public var payloadPacking: Double = 0
    /// Sending tasks to workers.
    public var dispatch: Double = 0
    /// Checking, spooling and recording results: on the loop's thread and on the result spooler's.
    public var results: Double = 0
    /// The part of `results` on the result spooler's thread (beside the loop, not in its way).
    public var spoolerCPU: Double = 0
    /// Heartbeats, sweeps, liveness.
    public var bookkeeping: Double = 0
    public var audio: Double = 0
    /// Muxing the segments and the audio into a faststart MP4 (the rewrite that moves moov included).
    public var stitch: Double = 0
    public var verification: Double = 0
    public var database: Double = 0
    /// The coordinator loop's own waits on the store: the part of `database` each segment costs it.
    public var loopDatabase: Double = 0
    /// The result spooler's waits on the store (recording results): the rest of `database` each segment costs.
    public var spoolerDatabase: Double = 0
    public var shutdown: Double = 0
    /// From the first task sent to the last result received.
    public var encodingWall: Double = 0
    /// The workers' own encode seconds, summed over segments.
    public var workerEncode: Double = 0
    public var segmentsDispatched: Int = 0
    public var payloadBytes: Int64 = 0
    /// Processor time of libzmq's I/O threads (framing, and with CURVE encryption), not in any phase above.
    public var zmqIO: Double = 0
    public var resultBytes: Int64 = 0

    public init() {}
}

/// A monotonic clock in seconds, and a way to add a body's duration to a total.
public enum Stopwatch {
    public static var now: Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// The calling thread's processor time in seconds.
    public static var threadCPU: Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    public static func time<R, E: Error>(_ total: inout Double, _ body: () throws(E) -> R) throws(E) -> R {
        let started = now
        defer { total += now - started }
        return try body()
    }
}
