import TesseraCore

/// How far each job's encode is between segment completions, and how fast it goes: the frames workers
/// report for their tasks in flight, and a rate over the last seconds of frames encoded (reported and
/// completed). No I/O; the clock is passed in.
struct ProgressMeter {
    typealias SegmentRef = ClusterMessage.SegmentRef

    /// Seconds of history the rate is taken over.
    static let window = 10.0

    /// Frames reported for each task in flight.
    private(set) var reported: [SegmentRef: Int] = [:]
    /// Each job's frames encoded so far (reported and completed), with the times they were seen.
    private var samples: [String: [(time: Double, frames: Int)]] = [:]
    private var counted: [String: Int] = [:]
    /// Jobs whose figures changed since `taken`.
    private(set) var changed: Set<String> = []

    /// A worker reports `frames` of a task.
    mutating func reported(_ segment: SegmentRef, frames: Int, now: Double) {
        let before = reported[segment] ?? 0
        guard frames > before else { return }
        reported[segment] = frames
        add(segment.jobID, frames - before, now: now)
    }

    /// A segment of `frames` frames was recorded done. True when frames were reported for it: the job's
    /// frames in flight are to be recorded again at once (the store's done frames already include them).
    @discardableResult
    mutating func completed(_ segment: SegmentRef, frames: Int, now: Double) -> Bool {
        let before = reported.removeValue(forKey: segment) ?? 0
        add(segment.jobID, max(frames - before, 0), now: now)
        return before > 0
    }

    /// A task ended without a result (failed, handed back, its worker gone): its frames no longer count
    /// as in flight (the rate keeps what was encoded).
    mutating func abandoned(_ segment: SegmentRef) {
        if reported.removeValue(forKey: segment) != nil { changed.insert(segment.jobID) }
    }

    /// Forgets a job.
    mutating func dropped(_ job: String) {
        reported = reported.filter { $0.key.jobID != job }
        samples[job] = nil
        counted[job] = nil
        changed.remove(job)
    }

    /// Frames of `job` encoded in tasks still in flight.
    func inFlight(_ job: String) -> Int {
        reported.reduce(0) { $0 + ($1.key.jobID == job ? $1.value : 0) }
    }

    /// Frames per second over the window up to `now`; nil before two samples a moment apart.
    func rate(_ job: String, now: Double) -> Double? {
        guard let history = samples[job], let first = history.first, let last = history.last else { return nil }
        let span = now - first.time
        guard span >= 1 else { return nil }
        return Double(last.frames - first.frames) / span
    }

    /// The jobs whose figures changed; clears the list.
    mutating func taken() -> Set<String> {
        defer { changed.removeAll() }
        return changed
    }

    private mutating func add(_ job: String, _ frames: Int, now: Double) {
        let total = (counted[job] ?? 0) + frames
        counted[job] = total
        var history = samples[job] ?? [(now, 0)]
        history.append((now, total))
        // Keep one sample older than the window, so the rate spans all of it.
        while history.count > 2, history[1].time < now - Self.window { history.removeFirst() }
        samples[job] = history
        changed.insert(job)
    }
}
