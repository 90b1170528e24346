/// A job's life: queued → planning → encoding → stitching → done, or failed / canceled on the way.
/// The allowed transitions are defined here once; the database's trigger enforces the same table
/// (migrations/0001_initial.sql), and a test checks that the two agree.
public enum JobState: String, Codable, Sendable, CaseIterable {
    case queued, planning, encoding, stitching, done, failed, canceled

    public var isFinal: Bool { self == .done || self == .failed || self == .canceled }

    public var next: Set<JobState> {
        switch self {
        case .queued: return [.planning, .failed, .canceled]
        // A coordinator that dies while planning or stitching hands the job back to the queue.
        case .planning: return [.encoding, .queued, .failed, .canceled]
        case .encoding: return [.stitching, .failed, .canceled]
        case .stitching: return [.done, .encoding, .queued, .failed, .canceled]
        case .done, .failed, .canceled: return []
        }
    }

    public func canMove(to state: JobState) -> Bool { next.contains(state) }
}

/// A segment's life: pending → leased → done, back to pending when a lease expires or a worker hands it
/// back, failed after too many attempts, canceled with its job.
public enum SegmentState: String, Codable, Sendable, CaseIterable {
    case pending, leased, done, failed, canceled

    public var isFinal: Bool { self == .done || self == .failed || self == .canceled }

    public var next: Set<SegmentState> {
        switch self {
        case .pending: return [.leased, .failed, .canceled]
        case .leased: return [.done, .pending, .failed, .canceled]
        // A done segment whose spooled result went missing is encoded again.
        case .done: return [.pending]
        case .failed, .canceled: return []
        }
    }

    public func canMove(to state: SegmentState) -> Bool { next.contains(state) }
}
