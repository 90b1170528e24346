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
    /// Jobs queued behind this one, not planned yet (their work is not known: each counts as this one).
    public var queuedJobs: Int
    /// Seconds since the newest job was submitted: jobs arriving one after another (a burst being
    /// submitted) are not the end of a queue.
    public var quietSeconds: Double

    public init(encoders: Int, freeEncoders: Int, leasedWork: Double, pendingWork: Double, queuedJobs: Int = 0,
                quietSeconds: Double = .infinity) {
        self.encoders = encoders
        self.freeEncoders = freeEncoders
        self.leasedWork = leasedWork
        self.pendingWork = pendingWork
        self.queuedJobs = queuedJobs
        self.quietSeconds = quietSeconds
    }

    /// How long no job must have been submitted before the queue's last jobs count as its end.
    public static let quietBeforeEnding = 1.0

    /// Nothing leased, nothing pending.
    public static let idle = ClusterLoad(encoders: 0, freeEncoders: 0, leasedWork: 0, pendingWork: 0)

    /// Work the encoders have before this job's segments run on all of them.
    public var queuedWork: Double { leasedWork + pendingWork }
}

/// The rule's answer for a job under load: how many segments, and where they may fall.
public struct Segmentation: Sendable, Hashable {
    public var count: Int
    /// Cut where equal pieces need it, not only where the encode puts IDR frames: the end of a queue,
    /// which nothing queued behind it can even out.
    public var anywhere: Bool

    public init(count: Int, anywhere: Bool = false) {
        self.count = count
        self.anywhere = anywhere
    }
}

/// How many segments to cut a job into, given the load: the planner's other rules decide where.
///
/// Every cut costs an IDR frame a whole-file encode would not have made, a lead-in, a run-out, a pre-roll
/// decode and a round trip. It buys latency only when encoders would otherwise idle. So the rule follows
/// guided self-scheduling: a job gets pieces of about (the work left) / (2 × encoders), where the work
/// left is the work ahead of it (leased and pending), its own, and the jobs queued behind it (each
/// counted as this one: they are planned later). So
///
/// - on an idle cluster (nothing ahead or behind, an encoder free) it is cut finely, as a job alone is
///   (`nil`: the planner's own choice, about two segments per encoder);
/// - with work left worth (2 × encoders) times the job or more, it is one segment: no cut, no lead-in, no
///   run-out at all; the rest of the work keeps every other encoder busy meanwhile;
/// - in between, it gets that many segments where the encode puts IDR frames anyway;
/// - the queue's last job (nothing behind it) in more than one piece is cut into equal pieces wherever
///   they fall, so that the encoders finish together;
/// - at the end of a queue (fewer jobs behind than encoders, more work ahead than the job, no job
///   submitted for a second) the pieces are half that size, and cut the same way: what is leased last
///   is short, and nothing queued behind it could fill the encoders that finish first. (Not while a
///   burst is being submitted: the jobs behind may still be coming.)
///
/// Coordinators plan a job when its work is about to be leased, not when it is submitted, so the jobs
/// planned as the queue drains see less left and are cut finer, and the last ones spread over the
/// encoders. No segment is made longer than `longestSegmentSeconds` (a long job behind a long queue
/// still ends in pieces that can be spread, and its payloads stay small).
public struct SegmentationRule: Sendable, Hashable {
    /// The longest segment the rule makes, in seconds of video.
    public var longestSegmentSeconds: Double

    public init(longestSegmentSeconds: Double = 16) {
        self.longestSegmentSeconds = longestSegmentSeconds
    }

    /// Segments for a job of `seconds` of video and `work` pixels to encode under `load`; nil when the
    /// cluster has encoders to spare (cut for latency, as a job alone is).
    public func segments(seconds: Double, work: Double, load: ClusterLoad) -> Segmentation? {
        let encoders = load.encoders
        guard encoders > 0, work > 0, seconds > 0 else { return nil }
        // An encoder free and nothing waiting for it: this job is what it will do next.
        if load.freeEncoders > 0 && load.pendingWork <= 0 && load.queuedJobs == 0 { return nil }
        let fine = 2 * encoders
        let left = load.queuedWork + work * Double(1 + max(0, load.queuedJobs))
        // The end of a queue: fewer jobs behind than encoders, so nothing planned after it evens them
        // out; more work ahead than this job, and no job submitted for a while (not the start of a burst,
        // whose jobs are still coming). Its pieces are half as large, and fall where equal pieces need them.
        let ending = load.queuedJobs < encoders && load.queuedWork >= work && load.quietSeconds >= ClusterLoad.quietBeforeEnding
        let share = (Double((ending ? 4 : 2) * encoders) * work / left).rounded(.up)
        let longest = (seconds / max(longestSegmentSeconds, 0.001)).rounded(.up)
        let count = Int(min(Double(fine), max(1, share, longest)))
        guard count < fine else { return nil }
        return Segmentation(count: count, anywhere: (ending || load.queuedJobs == 0) && share > 1)
    }
}
