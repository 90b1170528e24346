/// The order in which a coordinator's jobs get its free encoders: each free slot goes to the first job in
/// the order that has a segment pending, so the first job takes every idle encoder before the next gets one.
/// Queued jobs are claimed for planning in the same order (`claims`).
///
/// Sharing the encoders among all queued jobs finishes every job late (processor sharing); serving the job
/// with the least work left first (shortest remaining processing time) finishes each one as early as the
/// jobs before it allow, which minimises the mean completion time. So:
///
/// 1. higher priority first;
/// 2. within a priority, a job that has waited `maxWait` or longer since it was submitted first, the
///    longest waiting of them first: a stream of small jobs cannot hold a large one back beyond the bound;
/// 3. then the least work left first (pixels to encode in its outstanding segments, a first pass of two
///    counting its second pass too);
/// 4. ties: the one submitted first, then the id. Deterministic: the same standings give the same order.
struct LeaseOrder: Equatable {
    /// Seconds after its submission past which a job is served before those of its priority that waited less.
    var maxWait: Double

    /// What the order knows of a job.
    struct Standing: Equatable {
        var priority: Int
        /// When it was submitted, on the clock `ranked` is given.
        var submitted: Double
        /// Pixels left to encode.
        var remaining: Double
    }

    /// The jobs in the order their pending segments are leased.
    func ranked(_ jobs: [String: Standing], now: Double) -> [String] {
        jobs.map { (id: $0.key, standing: $0.value) }.sorted { a, b in
            precedes(a.standing, a.id, b.standing, b.id, now: now)
        }.map(\.id)
    }

    /// Whether a job waited long enough to be served first within its priority.
    func overdue(_ job: Standing, now: Double) -> Bool { now - job.submitted >= maxWait }

    private func precedes(_ a: Standing, _ aID: String, _ b: Standing, _ bID: String, now: Double) -> Bool {
        if a.priority != b.priority { return a.priority > b.priority }
        let aOverdue = overdue(a, now: now), bOverdue = overdue(b, now: now)
        if aOverdue != bOverdue { return aOverdue }
        if !aOverdue, a.remaining != b.remaining { return a.remaining < b.remaining }
        if a.submitted != b.submitted { return a.submitted < b.submitted }
        return aID < bID
    }

    /// The default bound on a job's wait before it is served first: long enough that short uploads pass a
    /// long one, short enough that the long one is not starved by a steady stream of them.
    static let defaultMaxWait: Double = 600
}
