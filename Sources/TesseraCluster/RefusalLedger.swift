/// Counts the messages refused from each worker and decides what of them reaches the job's events and the log:
/// the first of each kind for a job and worker at once, then one record per interval with the count of those it
/// stands for; a worker refused more than `quarantineAfter` times in one interval is quarantined. No I/O.
struct RefusalLedger {
    /// Seconds over which refusals of one kind are recorded once.
    var interval: Double = 10
    /// Refused messages from one worker within an interval that get it quarantined.
    var quarantineAfter = 100

    struct Key: Hashable {
        var worker: String
        var job: String
        var segment: Int
        var kind: String
    }

    enum Decision: Equatable {
        /// Record it, standing for `count` refusals (itself and the quiet ones before it).
        case record(count: Int)
        /// Counted only: a record of its kind is recent.
        case quiet
        /// Quarantine the worker: `count` refusals within the interval.
        case quarantine(count: Int)
    }

    /// Per kind: when it was last recorded, and the refusals counted since.
    private var kinds: [Key: (recorded: Double, quiet: Int)] = [:]
    /// Per worker: the start of its current interval and its refusals in it.
    private var windows: [String: (start: Double, count: Int)] = [:]

    mutating func refused(_ key: Key, now: Double) -> Decision {
        var window = windows[key.worker] ?? (now, 0)
        if now - window.start >= interval { window = (now, 0) }
        window.count += 1
        windows[key.worker] = window
        if window.count == quarantineAfter { return .quarantine(count: window.count) }
        if let known = kinds[key], now - known.recorded < interval {
            kinds[key]?.quiet += 1
            return .quiet
        }
        let count = (kinds[key]?.quiet ?? 0) + 1
        kinds[key] = (now, 0)
        return .record(count: count)
    }

    /// The kinds whose interval ended with refusals not yet recorded, each with their count; they are recorded
    /// now, and kinds quiet for an interval are forgotten.
    mutating func due(now: Double) -> [(key: Key, count: Int)] {
        guard !kinds.isEmpty || !windows.isEmpty else { return [] }
        var due: [(key: Key, count: Int)] = []
        for (key, state) in kinds where now - state.recorded >= interval {
            if state.quiet > 0 {
                due.append((key, state.quiet))
                kinds[key] = (now, 0)
            } else {
                kinds[key] = nil
            }
        }
        windows = windows.filter { now - $0.value.start < interval }
        return due.sorted { ($0.key.job, $0.key.segment, $0.key.worker, $0.key.kind) < ($1.key.job, $1.key.segment, $1.key.worker, $1.key.kind) }
    }
}
