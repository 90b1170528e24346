import TesseraCore

/// A queued job as the coordinator orders its claims: what it was submitted with and how long it has waited.
public struct QueuedJob: Sendable, Hashable {
    public var id: String
    public var priority: Int
    /// Seconds since it was submitted, on the store's clock.
    public var waited: Double
    /// Pixels to encode as estimated at submit; nil when not known.
    public var work: Double?

    public init(id: String, priority: Int, waited: Double, work: Double?) {
        self.id = id
        self.priority = priority
        self.waited = waited
        self.work = work
    }
}

extension JobStore {
    /// The queued jobs `coordinator` may claim (assigned to none or to it), for the coordinator to order.
    public func queuedJobs(coordinator: String) throws(StoreError) -> [QueuedJob] {
        let rows = try run("listing the queued jobs", """
            SELECT id::text AS id, priority, submitted_work,
                extract(epoch FROM clock_timestamp() - created_at)::double precision AS waited
            FROM jobs WHERE state = 'queued' AND (assigned_coordinator IS NULL OR assigned_coordinator = $1)
            """, [coordinator])
        return rows.all.map {
            QueuedJob(id: $0.string("id"), priority: $0.int("priority") ?? Self.defaultPriority,
                      waited: $0.double("waited") ?? 0, work: $0.double("submitted_work"))
        }
    }

    /// Takes for planning the first job of `ranked` still queued for this coordinator (the order is the
    /// coordinator's, decided in Swift), skipping jobs another coordinator is claiming; nil when none is.
    /// `outranking` as in `claimQueuedJob(coordinator:only:outranking:)`.
    public func claimQueuedJob(coordinator: String, ranked: [String], outranking: Bool) throws(StoreError) -> JobRecord? {
        guard !ranked.isEmpty else { return nil }
        let rows = try run("claiming a job in order", """
            UPDATE jobs SET state = 'planning', coordinator = $1
            WHERE id = (SELECT j.id FROM unnest($2::uuid[]) WITH ORDINALITY AS o(id, turn) JOIN jobs j ON j.id = o.id
                        WHERE j.state = 'queued' AND (j.assigned_coordinator IS NULL OR j.assigned_coordinator = $1)
                            AND (NOT $3::boolean OR j.priority > (\(Self.pendingPriority)))
                        ORDER BY o.turn LIMIT 1 FOR UPDATE OF j SKIP LOCKED)
            RETURNING \(JobRecord.columns)
            """, [coordinator, Self.array(ranked), outranking ? "true" : "false"])
        return try rows.first.map { row throws(StoreError) in try JobRecord(row) }
    }

    /// The highest priority among coordinator `$1`'s encoding jobs with segments pending (NULL: none).
    static let pendingPriority = """
        SELECT max(p.priority) FROM jobs p
        WHERE p.coordinator = $1 AND p.state = 'encoding' AND p.stalled IS NULL
            AND EXISTS (SELECT 1 FROM segments s WHERE s.job_id = p.id AND s.state = 'pending')
        """
}
