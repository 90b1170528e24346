import Foundation
import PGClient
import TesseraCore

/// Jobs, segments, leases, attempts and workers in PostgreSQL. One connection; blocking; use it from
/// one thread at a time (each thread or service opens its own store).
public final class JobStore {
    public static let channel = "tessera_jobs"

    let db: PGConnection
    /// Seconds this store has spent waiting on the database (statements and transactions), for the
    /// coordinator's phase timings.
    public private(set) var queryTime: Double = 0

    /// Connects to `url` (a libpq URI or key=value string) and, with `migrate`, brings the schema up to date.
    public init(url: String, migrate: Bool = false, reconnectTimeout: TimeInterval = 30) throws(StoreError) {
        do {
            db = try PGConnection(conninfo: url, reconnectTimeout: reconnectTimeout)
        } catch {
            switch error.kind {
            case .malformedURL: throw StoreError("malformed database URL: \(error.message)", kind: error.kind)
            case .connection: throw StoreError("cannot connect to the database: \(error.message)", kind: error.kind, sqlState: error.sqlState)
            default: throw StoreError(error.description, kind: error.kind, sqlState: error.sqlState)
            }
        }
        if migrate { try Migrator.migrate(db) }
    }

    /// A store on the embedded server's session when the server runs with its database, else nil; with
    /// `migrate`, the schema brought up to date.
    public init?(answering server: EmbeddedPostgres, migrate: Bool = false, reconnectTimeout: TimeInterval = 30) throws(StoreError) {
        guard let session = server.answeringSession() else { return nil }
        session.reconnectTimeout = reconnectTimeout
        db = session
        if migrate { try Migrator.migrate(db) }
    }

    public func close() { db.close() }

    /// Whether the session is up now.
    public var isConnected: Bool { db.isConnected }

    /// Database sessions this store has opened: it changes when the connection was lost and made again.
    public var sessions: Int { db.sessionsOpened }

    func run(_ doing: String, _ sql: String, _ params: [String?] = []) throws(StoreError) -> PGRows {
        do { return try StoreMetrics.time(&queryTime) { () throws(PGError) in try db.query(sql, params) } } catch {
            throw StoreError(error, doing)
        }
    }

    /// Runs `body` in one transaction.
    func transaction<R>(_ doing: String, _ body: () throws -> R) throws(StoreError) -> R {
        do {
            return try StoreMetrics.time(&queryTime) { try db.transaction(body) }
        } catch let error as StoreError {
            throw error
        } catch let error as PGError {
            throw StoreError(error, doing)
        } catch {
            throw StoreError("\(doing): \(error)")
        }
    }

    public func migrate() throws(StoreError) -> [Int] { try Migrator.migrate(db) }

    /// Commits on this connection stop waiting for the WAL flush (`synchronous_commit = off`). Safe only
    /// for a session whose every write the cluster can lose and redo: a server crash may forget its
    /// last fraction of a second of commits, never tearing one (the state is as if they never ran).
    /// For the coordinator's loop: see `Coordinator.run`.
    public func commitWithoutWaitingForFlush() throws(StoreError) {
        do { try db.set("synchronous_commit", to: "off") } catch { throw StoreError(error, "relaxing commit durability") }
    }

    /// Prepared statements on this connection run one generic plan, made once, instead of being planned
    /// again with each execution's values (`plan_cache_mode`). For the coordinator's sessions, which run
    /// the same few statements hundreds of times a second: every one is a lookup by key or through a
    /// partial index whose plan does not depend on the values, and planning cost more than executing.
    public func planStatementsOnce() throws(StoreError) {
        do { try db.set("plan_cache_mode", to: "force_generic_plan") } catch { throw StoreError(error, "choosing generic plans") }
    }

    // MARK: Jobs

    /// Priorities a job may have; higher ones are planned and leased first.
    public static let priorities = 0...100
    public static let defaultPriority = 50

    /// Queues a job; returns its id (`given`, or a new UUID: `tessera transcode` names its job before its
    /// coordinator starts). With `coordinator`, only the coordinator of that id may take it. `work`: the pixels it
    /// asks the encoders for as estimated at submit (`queuedJobs`), nil when not known.
    public func submit(input: String, output: String, spec: JobSpec, coordinator: String? = nil,
                       priority: Int = JobStore.defaultPriority, id given: String? = nil, work: Double? = nil) throws(StoreError) -> String {
        guard Self.priorities.contains(priority) else { throw StoreError("priority \(priority) is not between 0 and 100") }
        let id = given ?? UUID().uuidString.lowercased()
        try transaction("submitting the job") {
            try db.query("""
                INSERT INTO jobs (id, input, output, settings, settings_hash, assigned_coordinator, priority, submitted_work)
                VALUES ($1::uuid, $2, $3, $4::jsonb, $5, $6, $7, $8)
                """, [id, input, output, CanonicalJSON.encode(spec), spec.digest, coordinator, String(priority), work.map { String($0) }])
            // A ladder job's events name its rungs, next to its creation.
            if let ladder = spec.ladder {
                try db.query("INSERT INTO job_events (job_id, to_state, detail) VALUES ($1::uuid, 'ladder', $2)", [id, ladder.summary])
            }
        }
        return id
    }

    /// Finds a job by its id or a unique prefix of it.
    public func job(_ idOrPrefix: String) throws(StoreError) -> JobRecord {
        try Self.validateID(idOrPrefix)
        let key = idOrPrefix.lowercased()
        // A whole id is looked up by the primary key; a prefix scans every job's id as text.
        let rows = UUID(uuidString: key) != nil
            ? try run("reading the job", "SELECT \(JobRecord.columns) FROM jobs WHERE id = $1::uuid", [key])
            : try run("reading the job", "SELECT \(JobRecord.columns) FROM jobs WHERE id::text LIKE $1 || '%' ORDER BY jobs.created_at LIMIT 2", [key])
        guard let row = rows.first else { throw StoreError("no job \(idOrPrefix)") }
        guard rows.count == 1 || rows[0].string("id") == key else { throw StoreError("job id prefix \(idOrPrefix) is ambiguous") }
        return try JobRecord(row)
    }

    /// Refuses what cannot be a job id or a prefix of one.
    public static func validateID(_ idOrPrefix: String) throws(StoreError) {
        guard !idOrPrefix.isEmpty, idOrPrefix.count <= 36, idOrPrefix.allSatisfy({ $0.isHexDigit || $0 == "-" }) else {
            throw StoreError("'\(idOrPrefix)' is not a job id")
        }
    }

    /// Jobs (in `state`, when given), newest first. (`jobs.created_at`: a bare `created_at` would sort by
    /// the formatted column of that name, to the millisecond.)
    public func jobs(state: JobState? = nil, limit: Int = 1000) throws(StoreError) -> [JobRecord] {
        let rows = try run("listing jobs", """
            SELECT \(JobRecord.columns) FROM jobs WHERE $1::text IS NULL OR state = $1 ORDER BY jobs.created_at DESC LIMIT $2
            """, [state?.rawValue, String(limit)])
        var out: [JobRecord] = []
        for row in rows.all { out.append(try JobRecord(row)) }
        return out
    }

    /// The jobs that have not ended, newest first.
    public func openJobs(limit: Int = 1000) throws(StoreError) -> [JobRecord] {
        let rows = try run("listing jobs", """
            SELECT \(JobRecord.columns) FROM jobs WHERE state NOT IN ('done', 'failed', 'canceled') ORDER BY jobs.created_at DESC LIMIT $1
            """, [String(limit)])
        var out: [JobRecord] = []
        for row in rows.all { out.append(try JobRecord(row)) }
        return out
    }

    /// Moves a job; refuses moves the state machine does not allow (the trigger refuses them too).
    public func setState(_ id: String, to state: JobState, error: String? = nil) throws(StoreError) {
        let current = try job(id)
        guard current.state.canMove(to: state) else {
            throw StoreError("job \(id) cannot go from \(current.state.rawValue) to \(state.rawValue)")
        }
        let moved = try run("updating the job", "UPDATE jobs SET state = $2, error = coalesce($3, error) WHERE id = $1::uuid AND state = $4",
                            [current.id, state.rawValue, error, current.state.rawValue])
        guard moved.affected == 1 else { throw StoreError("job \(id) changed state meanwhile (wanted \(current.state.rawValue) → \(state.rawValue))") }
    }

    /// Takes the queued job of highest priority (the oldest of those) for planning that names no
    /// coordinator or this one; nil when none is queued. With `outranking`, only a job of a higher
    /// priority than every job of this coordinator's with segments pending (it must not wait behind
    /// them); none when no segment is pending (nothing to outrank: the jobs being planned come first).
    public func claimQueuedJob(coordinator: String, only job: String? = nil, outranking: Bool = false) throws(StoreError) -> JobRecord? {
        let rows = try run("claiming a job", """
            UPDATE jobs SET state = 'planning', coordinator = $1
            WHERE id = (SELECT id FROM jobs WHERE state = 'queued' AND ($2::uuid IS NULL OR id = $2::uuid)
                            AND (assigned_coordinator IS NULL OR assigned_coordinator = $1)
                            AND (NOT $3::boolean OR priority > (\(Self.pendingPriority)))
                        ORDER BY priority DESC, created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
            RETURNING \(JobRecord.columns)
            """, [coordinator, job, outranking ? "true" : "false"])
        return try rows.first.map { row throws(StoreError) in try JobRecord(row) }
    }

    /// Records the planned segments (and the output's pixels per frame, which weigh the job's queued
    /// work) and moves the job to encoding; false (nothing recorded) when the job is no longer being
    /// planned (canceled, or taken over by another coordinator).
    @discardableResult
    public func addSegments(_ jobID: String, _ segments: [PlannedSegment], framePixels: Int? = nil,
                            outputs: Int = 1) throws(StoreError) -> Bool {
        try transaction("recording the plan") {
            let planning = try db.query("SELECT state FROM jobs WHERE id = $1::uuid FOR UPDATE", [jobID]).first?.string("state")
            guard planning == JobState.planning.rawValue else { return false }
            // One statement for the whole plan (a long job in short segments has thousands).
            func column(_ value: (PlannedSegment) -> String) -> String { Self.array(segments.map(value)) }
            try db.query("""
                INSERT INTO segments (job_id, index, start_pts, end_pts, frame_count, first_packet, last_packet,
                                      pre_roll_packets, entry, encoder_threads)
                SELECT $1::uuid, u.i, u.s, u.e, u.f, u.fp, u.lp, u.p, u.en, nullif(u.t, 0)
                FROM unnest($2::int[], $3::bigint[], $4::bigint[], $5::int[], $6::int[], $7::int[], $8::int[], $9::text[],
                            $10::int[]) AS u(i, s, e, f, fp, lp, p, en, t)
                ON CONFLICT (job_id, index) DO NOTHING
                """, [jobID, column { String($0.index) }, column { String($0.startPTS) }, column { String($0.endPTS) },
                      column { String($0.frameCount) }, column { String($0.firstPacket) }, column { String($0.lastPacket) },
                      column { String($0.preRollPackets) }, column { $0.entry.rawValue },
                      column { String($0.encoderThreads ?? 0) }])
            let frames = segments.reduce(0) { $0 + $1.frameCount }
            let moved = try db.query("""
                UPDATE jobs SET segments_total = $2, frames_total = $3, frame_pixels = $4, outputs = $5, state = 'encoding'
                WHERE id = $1::uuid AND state = 'planning'
                """, [jobID, String(segments.count), String(frames), framePixels.map { String($0) }, String(max(outputs, 1))])
            guard moved.affected == 1 else { throw StoreError("job \(jobID) is no longer being planned") }
            return true
        }
    }

    /// Cancels a job: it and every pending or leased segment become canceled. False when it had already ended.
    @discardableResult
    public func cancel(_ idOrPrefix: String) throws(StoreError) -> Bool {
        let job = try job(idOrPrefix)
        guard !job.state.isFinal else { return false }
        return try transaction("canceling the job") {
            try db.query("""
                UPDATE segments SET state = 'canceled', lease_expires_at = NULL, last_error = 'job canceled'
                WHERE job_id = $1::uuid AND state IN ('pending', 'leased')
                """, [job.id])
            let rows = try db.query("""
                UPDATE jobs SET state = 'canceled', error = 'canceled' WHERE id = $1::uuid
                AND state NOT IN ('done', 'failed', 'canceled')
                """, [job.id])
            return rows.affected == 1
        }
    }

    /// Cancels every job that has not ended; returns their ids.
    public func cancelAll() throws(StoreError) -> [String] {
        let open = try run("listing open jobs", "SELECT id::text AS id FROM jobs WHERE state NOT IN ('done', 'failed', 'canceled')")
        var canceled: [String] = []
        for row in open.all where try cancel(row.string("id")) { canceled.append(row.string("id")) }
        return canceled
    }

    // MARK: Segments and leases

    /// The job's plan as recorded: every segment with its packet range.
    public func plannedSegments(_ jobID: String) throws(StoreError) -> [PlannedSegment] {
        try run("reading the plan", """
            SELECT index, start_pts, end_pts, first_packet, last_packet, frame_count, pre_roll_packets, entry, encoder_threads
            FROM segments WHERE job_id = $1::uuid ORDER BY index
            """, [jobID]).all.map {
            PlannedSegment(index: $0.int("index") ?? 0, startPTS: $0.int64("start_pts") ?? 0, endPTS: $0.int64("end_pts") ?? 0,
                           firstPacket: $0.int("first_packet") ?? 0, lastPacket: $0.int("last_packet") ?? 0,
                           frameCount: $0.int("frame_count") ?? 0, preRollPackets: $0.int("pre_roll_packets") ?? 0,
                           entry: RandomAccess(rawValue: $0.string("entry")) ?? .idr, encoderThreads: $0.int("encoder_threads"))
        }
    }

    /// Records the job's reference SPS/PPS (hex) if none is recorded yet; returns the recorded one.
    /// The coordinator records it from the job's settings before any segment is dispatched.
    public func referenceExtradata(_ jobID: String, proposing hex: String) throws(StoreError) -> String {
        let rows = try run("recording the job's headers", """
            UPDATE jobs SET extradata = coalesce(extradata, $2) WHERE id = $1::uuid RETURNING extradata
            """, [jobID, hex])
        return rows.first?.string("extradata") ?? hex
    }

    /// The segments leased to `worker` now (on `coordinator`'s jobs, when given).
    public func leases(worker: String, coordinator: String? = nil) throws(StoreError) -> [Lease] {
        try run("listing the worker's leases", """
            SELECT job_id::text AS job_id, index, start_pts, end_pts, frame_count, attempts, lease_token FROM segments
            WHERE state = 'leased' AND worker_id = $1
                AND ($2::text IS NULL OR job_id IN (SELECT id FROM jobs WHERE coordinator = $2))
            ORDER BY job_id, index
            """, [worker, coordinator]).all.map(Lease.init)
    }

    /// Workers that hold leases now (on the jobs `coordinator` claimed, when given).
    public func leaseHolders(coordinator: String? = nil) throws(StoreError) -> [String] {
        try run("listing lease holders", """
            SELECT DISTINCT s.worker_id FROM segments s JOIN jobs j ON j.id = s.job_id
            WHERE s.state = 'leased' AND ($1::text IS NULL OR j.coordinator = $1)
            """, [coordinator]).all.map { $0.string("worker_id") }
    }

    /// Jobs in `state` (claimed by `coordinator`, when given), oldest first.
    public func jobIDs(in state: JobState, coordinator: String? = nil) throws(StoreError) -> [String] {
        try run("listing jobs", """
            SELECT id::text AS id FROM jobs WHERE state = $1 AND ($2::text IS NULL OR coordinator = $2) ORDER BY created_at
            """, [state.rawValue, coordinator]).all.map { $0.string("id") }
    }

    /// A done segment whose spooled result is missing or damaged goes back to pending; `countingAttempt` when its
    /// encode was at fault (the stitch refused it), so that the attempt limit ends a segment refused every time.
    public func redo(_ jobID: String, _ index: Int, reason: String, countingAttempt: Bool) throws(StoreError) {
        _ = try run("re-queuing the segment", """
            UPDATE segments SET state = 'pending', result_path = NULL, result_offset = 0, checksum = NULL, size_bytes = NULL, last_error = $3,
                attempts = attempts + CASE WHEN $4 THEN 1 ELSE 0 END
            WHERE job_id = $1::uuid AND index = $2 AND state = 'done'
            """, [jobID, String(index), reason, countingAttempt ? "true" : "false"])
    }

    public func segments(_ jobID: String) throws(StoreError) -> [SegmentRecord] {
        try run("reading segments", "SELECT \(SegmentRecord.columns) FROM segments WHERE job_id = $1::uuid ORDER BY index", [jobID]).all.map(SegmentRecord.init)
    }

    /// Registers a worker or refreshes its heartbeat. With `key` (CURVE), the id is bound to the first key
    /// it joined with: false, and nothing recorded, when it is bound to another.
    @discardableResult
    public func heartbeat(worker: String, host: String, capabilities: [String: String] = [:], key: String? = nil) throws(StoreError) -> Bool {
        try run("recording the worker", """
            INSERT INTO workers (id, host, capabilities, public_key) VALUES ($1, $2, $3::jsonb, $4)
            ON CONFLICT (id) DO UPDATE SET host = EXCLUDED.host, capabilities = EXCLUDED.capabilities, last_heartbeat = now(),
                public_key = coalesce(workers.public_key, EXCLUDED.public_key)
            WHERE EXCLUDED.public_key IS NULL OR workers.public_key IS NULL OR workers.public_key = EXCLUDED.public_key
            """, [worker, host, CanonicalJSON.encode(capabilities), key]).affected == 1
    }

    /// Leases up to `limit` pending segments of encoding jobs to `worker` for `seconds`. Concurrent
    /// lessors never get the same segment (FOR UPDATE SKIP LOCKED). See `lease(slots:)` for the order.
    public func lease(worker: String, seconds: Double, limit: Int = 1, jobs: [String]? = nil,
                      attemptLimit: Int = Int(Int32.max)) throws(StoreError) -> [Lease] {
        try lease(slots: Array(repeating: worker, count: max(limit, 0)), seconds: seconds, jobs: jobs,
                  attemptLimit: attemptLimit).map(\.lease)
    }

    /// Leases one pending segment of an encoding job for each entry of `slots` (a worker id, once per
    /// free slot; interleave workers so that a short queue is shared) in one statement, for `seconds`.
    /// Concurrent lessors never get the same segment (FOR UPDATE SKIP LOCKED). Jobs of higher priority
    /// first; within a priority, fair between jobs: a segment's place is the leases its job holds now
    /// plus its rank within the job, so the picks fill the jobs with the fewest leases evenly; ties go to
    /// the oldest job, then longest segments first: by the seconds a segment's last encode took when it has
    /// one (a two-pass job's second pass, by its first), else by its frames.
    /// With `coordinator`, only jobs that coordinator holds (one that lost a job to another leases no more of it).
    public func lease(slots: [String], seconds: Double, jobs: [String]? = nil, attemptLimit: Int = Int(Int32.max),
                      coordinator: String? = nil) throws(StoreError) -> [(worker: String, lease: Lease)] {
        guard !slots.isEmpty else { return [] }
        // The ranking cannot sit beside FOR UPDATE (no window functions there), so `ranked` orders the
        // candidates unlocked and `picked` locks them in that order, skipping rows others hold; the
        // lock re-checks `state = 'pending'` on rows changed meanwhile. Each part is computed once
        // (MATERIALIZED). Only the first 2 × slots of each job are candidates (no job gives more than
        // all the slots; the margin is for rows a concurrent lessor holds, and a lessor that still comes
        // up short gets the rest on its next round), read per job in the order of the pending index
        // (LATERAL … LIMIT), so a statement reads a few rows of each job, not all its pending ones.
        let rows = try run("leasing segments", """
            WITH open_jobs AS MATERIALIZED (
                SELECT j.id, j.priority, j.created_at, (SELECT count(*) FROM segments l WHERE l.job_id = j.id AND l.state = 'leased') AS n
                FROM jobs j WHERE j.state = 'encoding' AND ($4::uuid[] IS NULL OR j.id = ANY($4::uuid[]))
                    AND ($6::text IS NULL OR j.coordinator = $6)
            ), ranked AS MATERIALIZED (
                SELECT c.job_id, c.index, o.priority, o.created_at, c.seconds, c.frame_count, o.n + c.rank AS place
                FROM open_jobs o CROSS JOIN LATERAL (
                    SELECT s1.job_id, s1.index, s1.seconds, s1.frame_count,
                        row_number() OVER (ORDER BY s1.seconds DESC NULLS LAST, s1.frame_count DESC, s1.index) AS rank
                    FROM (SELECT job_id, index, encode_seconds AS seconds, frame_count FROM segments
                          WHERE job_id = o.id AND state = 'pending' AND attempts < $5
                          ORDER BY encode_seconds DESC NULLS LAST, frame_count DESC, index LIMIT 2 * $3::int) s1
                ) c
            ), picked AS (
                SELECT s2.job_id, s2.index, r.priority, r.place, r.created_at, r.seconds, r.frame_count
                FROM segments s2 JOIN ranked r ON r.job_id = s2.job_id AND r.index = s2.index
                WHERE s2.state = 'pending' AND s2.attempts < $5 AND ($4::uuid[] IS NULL OR s2.job_id = ANY($4::uuid[]))
                ORDER BY r.priority DESC, r.place, r.created_at, r.seconds DESC NULLS LAST, r.frame_count DESC, r.index
                LIMIT $3 FOR UPDATE OF s2 SKIP LOCKED
            ), numbered AS (
                SELECT job_id, index,
                    row_number() OVER (ORDER BY priority DESC, place, created_at, seconds DESC NULLS LAST, frame_count DESC, index) AS slot
                FROM picked
            )
            \(Self.leaseUpdate)
            """, [Self.array(slots), String(seconds), String(slots.count), jobs.map(Self.array), String(attemptLimit), coordinator])
        return Self.inSlotOrder(rows)
    }

    /// Leases one pending segment of an encoding job for each entry of `slots`, as `lease(slots:jobs:)` does,
    /// in the coordinator's order (`LeaseOrder`): the jobs of `ranked` in turn, each one's pending segments
    /// before the next job's, longest first within a job (by the seconds a segment's last encode took when it
    /// has one, else by its frames). The order across jobs is decided in Swift; the statement only follows it.
    public func lease(slots: [String], seconds: Double, ranked: [String], attemptLimit: Int = Int(Int32.max),
                      coordinator: String? = nil) throws(StoreError) -> [(worker: String, lease: Lease)] {
        guard !slots.isEmpty, !ranked.isEmpty else { return [] }
        // As in `lease(slots:jobs:)`: candidates ranked unlocked (the first 2 × slots of each job, by the
        // pending index), then locked in that order, skipping rows others hold. `turn` is the job's place in `ranked`.
        let rows = try run("leasing segments in order", """
            WITH ranked AS MATERIALIZED (
                SELECT c.job_id, c.index, o.turn, c.seconds, c.frame_count
                FROM unnest($4::uuid[]) WITH ORDINALITY AS o(id, turn)
                JOIN jobs j ON j.id = o.id AND j.state = 'encoding' AND ($6::text IS NULL OR j.coordinator = $6)
                CROSS JOIN LATERAL (
                    SELECT job_id, index, encode_seconds AS seconds, frame_count FROM segments
                    WHERE job_id = o.id AND state = 'pending' AND attempts < $5
                    ORDER BY encode_seconds DESC NULLS LAST, frame_count DESC, index LIMIT 2 * $3::int
                ) c
            ), picked AS (
                SELECT s2.job_id, s2.index, r.turn, r.seconds, r.frame_count
                FROM segments s2 JOIN ranked r ON r.job_id = s2.job_id AND r.index = s2.index
                WHERE s2.state = 'pending' AND s2.attempts < $5
                ORDER BY r.turn, r.seconds DESC NULLS LAST, r.frame_count DESC, r.index
                LIMIT $3 FOR UPDATE OF s2 SKIP LOCKED
            ), numbered AS (
                SELECT job_id, index, row_number() OVER (ORDER BY turn, seconds DESC NULLS LAST, frame_count DESC, index) AS slot
                FROM picked
            )
            \(Self.leaseUpdate)
            """, [Self.array(slots), String(seconds), String(slots.count), Self.array(ranked), String(attemptLimit), coordinator])
        return Self.inSlotOrder(rows)
    }

    /// The end of both lease statements: the segments of `numbered` (a slot each) leased to `$1[slot]` for `$2` seconds.
    static let leaseUpdate = """
        UPDATE segments s SET state = 'leased', worker_id = ($1::text[])[numbered.slot],
            lease_expires_at = clock_timestamp() + make_interval(secs => $2::double precision),
            lease_token = replace(gen_random_uuid()::text, '-', '')
        FROM numbered
        WHERE s.job_id = numbered.job_id AND s.index = numbered.index
        RETURNING numbered.slot, s.worker_id, s.job_id::text AS job_id, s.index, s.start_pts, s.end_pts, s.frame_count,
            s.attempts, s.lease_token
        """

    /// RETURNING follows the update's own order, not the slots': the leases back in slot order.
    static func inSlotOrder(_ rows: PGRows) -> [(worker: String, lease: Lease)] {
        rows.all.sorted { ($0.int("slot") ?? 0) < ($1.int("slot") ?? 0) }.map { (worker: $0.string("worker_id"), lease: Lease($0)) }
    }

    /// A finished segment to record with `complete(_:)`.
    public struct Completion: Sendable {
        public var jobID: String
        public var index: Int
        public var worker: String
        /// The token of the lease the result answers.
        public var token: String
        public var result: SegmentResult

        public init(jobID: String, index: Int, worker: String, token: String, result: SegmentResult) {
            self.jobID = jobID
            self.index = index
            self.worker = worker
            self.token = token
            self.result = result
        }
    }

    /// Records finished segments in one statement; returns the positions in `completions` that counted.
    /// One whose worker no longer holds the lease, or that names another lease's token (a late or forged
    /// result), changes nothing. The same segment from the same worker twice counts once, at its first
    /// position.
    public func complete(_ completions: [Completion]) throws(StoreError) -> Set<Int> {
        guard !completions.isEmpty else { return [] }
        let c = completions
        let rows = try run("recording the segments", """
            UPDATE segments s SET state = 'done', lease_expires_at = NULL, result_path = r.path, result_offset = r.result_offset,
                checksum = r.checksum, size_bytes = r.size_bytes, encode_seconds = r.encode_seconds
            FROM (
                SELECT DISTINCT ON (job_id, index, worker) *
                FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::double precision[],
                            $8::bigint[], $9::text[])
                    WITH ORDINALITY AS u(job_id, index, worker, path, checksum, size_bytes, encode_seconds, result_offset, token, position)
                ORDER BY job_id, index, worker, position
            ) r
            WHERE s.job_id = r.job_id AND s.index = r.index AND s.state = 'leased' AND s.worker_id = r.worker
                AND s.lease_token = r.token
            RETURNING r.position
            """, [Self.array(c.map(\.jobID)), Self.array(c.map { String($0.index) }), Self.array(c.map(\.worker)),
                  Self.array(c.map(\.result.path)), Self.array(c.map(\.result.checksum)),
                  Self.array(c.map { String($0.result.sizeBytes) }), Self.array(c.map { String($0.result.encodeSeconds) }),
                  Self.array(c.map { String($0.result.offset) }), Self.array(c.map(\.token))])
        return Set(rows.all.compactMap { $0.int("position").map { $0 - 1 } })
    }

    /// A PostgreSQL array literal of `items`, each quoted (any text is safe in it).
    static func array(_ items: [String]) -> String {
        "{" + items.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
            .joined(separator: ",") + "}"
    }

    /// A worker hands a segment back: with an error it counts as a failed attempt, without (shutting
    /// down) it does not. With a `token`, only the lease that has it.
    @discardableResult
    public func release(_ jobID: String, _ index: Int, worker: String, token: String? = nil, error: String?) throws(StoreError) -> Bool {
        try run("handing the segment back", """
            UPDATE segments SET state = 'pending', lease_expires_at = NULL, worker_id = NULL,
                attempts = attempts + CASE WHEN $4::text IS NULL THEN 0 ELSE 1 END, last_error = coalesce($4, last_error)
            WHERE job_id = $1::uuid AND index = $2 AND state = 'leased' AND worker_id = $3
                AND ($5::text IS NULL OR lease_token = $5)
            """, [jobID, String(index), worker, error, token]).affected == 1
    }

    /// Notes in the job's events that a result or failure from `worker` was refused, and why.
    public func recordNote(_ jobID: String, kind: String, detail: String) throws(StoreError) {
        _ = try run("recording a note", "INSERT INTO job_events (job_id, to_state, detail) SELECT id, $2, $3 FROM jobs WHERE id = $1::uuid",
                    [jobID, kind, detail])
    }

    public func recordRefusal(_ jobID: String, _ index: Int, worker: String, reason: String) throws(StoreError) {
        _ = try run("recording a refused result", """
            INSERT INTO job_events (job_id, segment_index, to_state, detail)
            SELECT id, $2, 'refused', $3 FROM jobs WHERE id = $1::uuid
            """, [jobID, String(index), "worker \(worker): \(reason)"])
    }

    /// Returns every lease of `worker` to pending at once (the worker is dead), counting an attempt. With
    /// `coordinator`, only its leases on that coordinator's jobs (a worker may serve several).
    @discardableResult
    public func releaseAll(worker: String, reason: String, countAttempt: Bool = true, coordinator: String? = nil) throws(StoreError) -> Int {
        try run("returning the worker's leases", """
            UPDATE segments SET state = 'pending', lease_expires_at = NULL, worker_id = NULL,
                attempts = attempts + CASE WHEN $3 THEN 1 ELSE 0 END, last_error = $2
            WHERE state = 'leased' AND worker_id = $1
                AND ($4::text IS NULL OR job_id IN (SELECT id FROM jobs WHERE coordinator = $4))
            """, [worker, reason, countAttempt ? "true" : "false", coordinator]).affected
    }

    /// Extends every lease `worker` holds (it is alive: it just sent a heartbeat); with `coordinator`, on
    /// that coordinator's jobs only.
    public func renewAll(worker: String, seconds: Double, coordinator: String? = nil) throws(StoreError) {
        _ = try run("renewing leases", """
            UPDATE segments SET lease_expires_at = clock_timestamp() + make_interval(secs => $2::double precision)
            WHERE state = 'leased' AND worker_id = $1
                AND ($3::text IS NULL OR job_id IN (SELECT id FROM jobs WHERE coordinator = $3))
            """, [worker, String(seconds), coordinator])
    }

    /// Expired leases go back to pending and count an attempt; a segment that reaches `attemptLimit`
    /// fails, and so does its job, with a message naming the segment and its last error. Returns the
    /// segments it returned to pending and the jobs it failed.
    public func reapExpiredLeases(attemptLimit: Int) throws(StoreError) -> (returned: [Lease], failedJobs: [String]) {
        try transaction("reaping expired leases") {
            let expired = try db.query("""
                UPDATE segments SET state = 'pending', lease_expires_at = NULL, attempts = attempts + 1,
                    last_error = 'lease expired (worker ' || worker_id || ')', worker_id = NULL
                WHERE state = 'leased' AND lease_expires_at < clock_timestamp()
                RETURNING job_id::text AS job_id, index, start_pts, end_pts, frame_count, attempts
                """)
            let exhausted = try db.query("""
                UPDATE segments SET state = 'failed'
                WHERE state = 'pending' AND attempts >= $1
                RETURNING job_id::text AS job_id, index, attempts, last_error
                """, [String(attemptLimit)])
            var failedJobs: [String] = []
            for row in exhausted.all {
                let job = row.string("job_id")
                let message = "segment \(row.string("index")) failed after \(row.string("attempts")) attempts: \(row["last_error"] ?? "no error recorded")"
                let failed = try db.query("""
                    UPDATE jobs SET state = 'failed', error = $2 WHERE id = $1::uuid AND state IN ('planning', 'encoding', 'stitching')
                    """, [job, message])
                if failed.affected == 1 {
                    failedJobs.append(job)
                    try db.query("""
                        UPDATE segments SET state = 'canceled', lease_expires_at = NULL, last_error = 'job failed'
                        WHERE job_id = $1::uuid AND state IN ('pending', 'leased')
                        """, [job])
                }
            }
            let returned = expired.all.map(Lease.init)
            return (returned, failedJobs)
        }
    }

    // MARK: Events and notifications

    public func events(_ jobID: String? = nil, after id: Int64 = 0) throws(StoreError) -> [JobEvent] {
        try run("reading events", """
            SELECT id, job_id::text AS job_id, segment_index, from_state, to_state, detail,
                to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at
            FROM job_events WHERE ($1::uuid IS NULL OR job_id = $1::uuid) AND id > $2 ORDER BY id
            """, [jobID, String(id)]).all.map(JobEvent.init)
    }

    /// The newest event's id (0 when there is none): where following every job's new events starts.
    public func latestEventID() throws(StoreError) -> Int64 {
        try run("reading events", "SELECT coalesce(max(id), 0) AS id FROM job_events").first?.int64("id") ?? 0
    }

    /// Subscribes this connection to job changes (LISTEN).
    public func listen() throws(StoreError) {
        do { try db.listen(Self.channel) } catch { throw StoreError(error, "listening for job changes") }
    }

    /// The socket job changes arrive on (see `PGConnection.socketDescriptor`).
    public var changesDescriptor: Int32? { db.socketDescriptor }

    /// Job changes read already, with a query's answer (see `PGConnection.hasNotifications`).
    public var hasChanges: Bool { db.hasNotifications }

    /// Waits up to `timeout` for job changes; returns the ids of the jobs that changed.
    public func waitForChanges(timeout: TimeInterval) throws(StoreError) -> [String] {
        try waitForJobChanges(timeout: timeout).map(\.id)
    }

    /// As `waitForChanges`, with the state each job was in when it notified.
    public func waitForJobChanges(timeout: TimeInterval) throws(StoreError) -> [(id: String, state: JobState?)] {
        do {
            return try db.waitForNotifications(timeout: timeout).map {
                let parts = $0.payload.split(separator: " ", maxSplits: 1)
                return (String(parts.first ?? ""), parts.count > 1 ? JobState(rawValue: String(parts[1])) : nil)
            }
        } catch {
            throw StoreError(error, "waiting for job changes")
        }
    }
}
