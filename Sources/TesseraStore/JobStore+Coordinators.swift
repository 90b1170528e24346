import Foundation
import PGClient
import TesseraCore

/// A coordinator as the store knows it: registered when it starts, seen at each of its heartbeats.
public struct CoordinatorRecord: Codable, Sendable, Equatable {
    public var id: String
    public var host: String
    public var endpoint: String?
    /// Seconds since its last heartbeat, by the database's clock.
    public var silentSeconds: Double
}

/// A job that changed hands: adopted from a coordinator that went silent.
public struct Adoption: Sendable, Equatable {
    public var jobID: String
    /// The coordinator that held it (nil: none recorded).
    public var previous: String?
    /// The state it was in; planning goes back to queued, stitching to encoding.
    public var state: JobState

    public init(jobID: String, previous: String?, state: JobState) {
        self.jobID = jobID
        self.previous = previous
        self.state = state
    }
}

extension JobStore {
    /// Registers `id` or records its heartbeat (the database's clock, so hosts' clocks do not matter).
    public func coordinatorHeartbeat(_ id: String, host: String, endpoint: String?) throws(StoreError) {
        _ = try run("recording the coordinator", """
            INSERT INTO coordinators (id, host, endpoint) VALUES ($1, $2, $3)
            ON CONFLICT (id) DO UPDATE SET host = EXCLUDED.host, endpoint = EXCLUDED.endpoint, last_seen = now()
            """, [id, host, endpoint])
    }

    /// A coordinator stopping cleanly: gone from the list, so its jobs are adopted at once.
    public func coordinatorLeft(_ id: String) throws(StoreError) {
        _ = try run("removing the coordinator", "DELETE FROM coordinators WHERE id = $1", [id])
    }

    /// The coordinators registered, the most recently seen first.
    public func coordinators() throws(StoreError) -> [CoordinatorRecord] {
        try run("listing coordinators", """
            SELECT id, host, endpoint, extract(epoch FROM now() - last_seen)::float8 AS silent FROM coordinators ORDER BY last_seen DESC
            """).all.map {
            CoordinatorRecord(id: $0.string("id"), host: $0.string("host"), endpoint: $0["endpoint"],
                              silentSeconds: $0.double("silent") ?? .infinity)
        }
    }

    /// Adopts for `coordinator` the unfinished jobs whose coordinator has not been seen for `silence`
    /// seconds (or is not registered). Jobs pinned to a coordinator (`assigned_coordinator`) stay with it.
    /// Planning goes back to queued and stitching to encoding; the jobs' leases return to pending without
    /// an attempt (their results would go to the silent coordinator). One transaction; concurrent
    /// adopters never take the same job.
    public func adoptOrphanedJobs(coordinator: String, silence: Double) throws(StoreError) -> [Adoption] {
        try transaction("adopting jobs") {
            let rows = try db.query("""
                WITH orphaned AS (
                    SELECT j.id, j.coordinator AS previous, j.state AS previous_state,
                           extract(epoch FROM now() - c.last_seen)::float8 AS silent
                    FROM jobs j LEFT JOIN coordinators c ON c.id = j.coordinator
                    WHERE j.state IN ('planning', 'encoding', 'stitching') AND j.coordinator IS DISTINCT FROM $1
                        AND j.assigned_coordinator IS NULL
                        AND (c.last_seen IS NULL OR c.last_seen < now() - make_interval(secs => $2::double precision))
                    FOR UPDATE OF j SKIP LOCKED
                )
                UPDATE jobs j SET coordinator = $1,
                    state = CASE o.previous_state WHEN 'planning' THEN 'queued' WHEN 'stitching' THEN 'encoding' ELSE o.previous_state END
                FROM orphaned o WHERE j.id = o.id
                RETURNING j.id::text AS id, o.previous, o.previous_state, o.silent
                """, [coordinator, String(silence)])
            var adopted: [Adoption] = []
            for row in rows.all {
                let id = row.string("id"), previous: String? = row["previous"]
                let silent = row.double("silent").map { String(format: "silent %.0f s", $0) } ?? "not registered"
                try db.query("""
                    UPDATE segments SET state = 'pending', lease_expires_at = NULL, worker_id = NULL,
                        last_error = 'its coordinator stopped answering'
                    WHERE job_id = $1::uuid AND state = 'leased'
                    """, [id])
                try db.query("""
                    INSERT INTO job_events (job_id, to_state, detail) VALUES ($1::uuid, 'adopted', $2)
                    """, [id, "coordinator \(coordinator) took the job over from \(previous ?? "none") (\(silent))"])
                adopted.append(Adoption(jobID: id, previous: previous, state: JobState(rawValue: row.string("previous_state")) ?? .encoding))
            }
            return adopted
        }
    }

    /// Which of `jobs` another coordinator holds now (adopted while this one was away).
    public func jobsHeldElsewhere(_ jobs: [String], coordinator: String) throws(StoreError) -> [String] {
        guard !jobs.isEmpty else { return [] }
        return try run("checking who holds the jobs", """
            SELECT id::text AS id FROM jobs WHERE id = ANY($1::uuid[]) AND coordinator IS DISTINCT FROM $2
            """, [Self.array(jobs), coordinator]).all.map { $0.string("id") }
    }

    /// Whether `coordinator` holds `job` now.
    public func holds(_ job: String, coordinator: String) throws(StoreError) -> Bool {
        try jobsHeldElsewhere([job], coordinator: coordinator).isEmpty
    }

    // MARK: Local faults

    /// Records why the job is not progressing (`reason`), or that it is again (nil). Each change is an
    /// event. Returns the seconds it has been stalled (0 when it is not).
    @discardableResult
    public func setStalled(_ job: String, reason: String?) throws(StoreError) -> Double {
        try transaction("recording why the job waits") {
            let changed = try db.query("""
                UPDATE jobs SET stalled = $2, stalled_since = CASE WHEN $2::text IS NULL THEN NULL ELSE coalesce(stalled_since, now()) END
                WHERE id = $1::uuid AND stalled IS DISTINCT FROM $2
                RETURNING stalled
                """, [job, reason])
            if changed.affected == 1 {
                try db.query("INSERT INTO job_events (job_id, to_state, detail) VALUES ($1::uuid, $2, $3)",
                             [job, reason == nil ? "resumed" : "stalled", reason ?? "the fault cleared"])
            }
            return try db.query("""
                SELECT coalesce(extract(epoch FROM now() - stalled_since), 0)::float8 AS s FROM jobs WHERE id = $1::uuid
                """, [job]).first?.double("s") ?? 0
        }
    }

    /// Why the job waits now, if it does.
    public func stalled(_ job: String) throws(StoreError) -> String? {
        try run("reading the job", "SELECT stalled FROM jobs WHERE id = $1::uuid", [job]).first?["stalled"]
    }

    // MARK: Input identity

    /// Records the identity of the job's input if none is recorded yet; returns the recorded one.
    public func pinInput(_ job: String, identity json: String) throws(StoreError) -> String {
        try run("recording the input's identity", """
            UPDATE jobs SET input_identity = coalesce(input_identity, $2::jsonb) WHERE id = $1::uuid RETURNING input_identity::text AS identity
            """, [job, json]).first?.string("identity") ?? json
    }
}

extension JobStore {
    /// Records how far a job's encode is between segment completions: frames encoded in tasks in flight,
    /// and frames per second (nil: not known yet). Only while the job is encoding.
    public func recordProgress(_ job: String, framesEncoding: Int, fps: Double?, speed: Double?) throws(StoreError) {
        _ = try run("recording progress", """
            UPDATE jobs SET frames_encoding = $2, fps = $3::double precision, speed = $4::double precision
            WHERE id = $1::uuid AND state = 'encoding'
                AND (frames_encoding, fps, speed) IS DISTINCT FROM ($2::bigint, $3::double precision, $4::double precision)
            """, [job, String(framesEncoding), fps.map { String(format: "%.3f", $0) }, speed.map { String(format: "%.4f", $0) }])
    }
}
