/// What the cluster is doing when a job is planned: its encoders and the work queued for them.
///
/// Work is counted in pixels to encode (frames × output width × height), so that a queue of 1080p
/// segments weighs what it costs against a 360p clip.
public struct ClusterLoad: Sendable, Hashable {
    /// Encoders known to the planner: those busy now (segments leased), or more when it knows of idle ones.
    public var encoders: Int
    /// Encoders with nothing to do now.
    public var freeEncoders: Int
    /// Work in segments leased now (in flight on the encoders).
    public var leasedWork: Double
    /// Work in pending segments of jobs that lease before this one (its priority or higher).
    public var pendingWork: Double

    public init(encoders: Int, freeEncoders: Int, leasedWork: Double, pendingWork: Double) {
        self.encoders = encoders
        self.freeEncoders = freeEncoders
        self.leasedWork = leasedWork
        self.pendingWork = pendingWork
    }

    /// Nothing leased, nothing pending.
    public static let idle = ClusterLoad(encoders: 0, freeEncoders: 0, leasedWork: 0, pendingWork: 0)

    /// Work the encoders have before this job's segments run on all of them.
    public var queuedWork: Double { leasedWork + pendingWork }
}

/// How many segments to cut a job into, given the load: the planner's other rules decide where.
///
/// Every cut costs an IDR frame a whole-file encode would not have made, a lead-in, a run-out, a pre-roll
/// decode and a round trip. It buys latency only when encoders would otherwise idle. So the rule follows
/// guided self-scheduling: a job gets pieces of about (queued work + its own work) / (2 × encoders), so
///
/// - on an idle cluster (nothing queued, an encoder free) it is cut finely, as a job alone is (`nil`: the
///   planner's own choice, about two segments per encoder);
/// - behind queued work worth as much as the job, it gets one segment per encoder;
/// - behind queued work worth (2 × encoders − 1) times the job or more, it is one segment: no cut, no
///   lead-in, no run-out at all; the queue keeps every encoder busy meanwhile.
///
/// Jobs planned as the queue drains see less ahead of them and are cut finer again, so the queue's last
/// jobs spread over the encoders. No segment is made longer than `longestSegmentSeconds` (a long job
/// behind a long queue still ends in pieces that can be spread, and its payloads stay small).
public struct SegmentationRule: Sendable, Hashable {
    /// The longest segment the rule makes, in seconds of video.
    public var longestSegmentSeconds: Double

    public init(longestSegmentSeconds: Double = 16) {
        self.longestSegmentSeconds = longestSegmentSeconds
    }

    /// Segments for a job of `seconds` of video and `work` pixels to encode under `load`; nil when the
    /// cluster has encoders to spare (cut for latency, as today).
    public func segments(seconds: Double, work: Double, load: ClusterLoad) -> Int? {
        let encoders = load.encoders
        guard encoders > 0, work > 0, seconds > 0 else { return nil }
        // An encoder free and nothing waiting for it: this job is what it will do next.
        if load.freeEncoders > 0 && load.pendingWork <= 0 { return nil }
        let fine = 2 * encoders
        let share = (2 * Double(encoders) * work / (load.queuedWork + work)).rounded(.up)
        let longest = (seconds / max(longestSegmentSeconds, 0.001)).rounded(.up)
        let count = Int(min(Double(fine), max(1, share, longest)))
        return count >= fine ? nil : count
    }
}
