import PGClient
import TesseraCore

/// A worker key's audit record: its results encoded again by another key and compared (`worker_audits`).
public struct WorkerAudit: Codable, Sendable, Equatable {
    /// Its CURVE public key, or its worker id on a plaintext transport.
    public var identity: String
    /// The worker id it last joined with.
    public var workerID: String
    public var audited: Int
    public var matched: Int
    public var mismatched: Int
    /// Why it gets no work; nil: it is not quarantined.
    public var quarantineReason: String?
    public var quarantinedAt: String?

    public init(identity: String, workerID: String, audited: Int = 0, matched: Int = 0, mismatched: Int = 0,
                quarantineReason: String? = nil, quarantinedAt: String? = nil) {
        self.identity = identity
        self.workerID = workerID
        self.audited = audited
        self.matched = matched
        self.mismatched = mismatched
        self.quarantineReason = quarantineReason
        self.quarantinedAt = quarantinedAt
    }

    public var isQuarantined: Bool { quarantineReason != nil }

    static let columns = "identity, worker_id, audited, matched, mismatched, quarantine_reason, quarantined_at::text AS quarantined_at"

    init(_ row: PGRow) {
        identity = row.string("identity")
        workerID = row.string("worker_id")
        audited = row.int("audited") ?? 0
        matched = row.int("matched") ?? 0
        mismatched = row.int("mismatched") ?? 0
        quarantineReason = row["quarantine_reason"]
        quarantinedAt = row["quarantined_at"]
    }
}

/// What audits cost one job (`status --json`'s `audit`).
public struct JobAudit: Codable, Sendable, Equatable {
    /// Segments picked for audit, each encoded again by another key and compared (`notAudited` of them given up).
    public var segments: Int
    /// Encode seconds the audits' extra encodes took (to the millisecond).
    public var extraEncodeSeconds: Double
    /// Audits whose first two encodes differed.
    public var mismatches: Int
    /// Audits given up: no worker of another key came within `--audit-wait`.
    public var notAudited: Int
    /// Workers its audits quarantined.
    public var quarantined: [String]

    public init(segments: Int, extraEncodeSeconds: Double, mismatches: Int, notAudited: Int, quarantined: [String]) {
        self.segments = segments
        self.extraEncodeSeconds = (extraEncodeSeconds * 1000).rounded() / 1000
        self.mismatches = mismatches
        self.notAudited = notAudited
        self.quarantined = quarantined
    }
}

/// Audit records and quarantines of worker keys.
extension JobStore {
    public func recordJobAudit(_ jobID: String, _ audit: JobAudit) throws(StoreError) {
        _ = try run("recording a job's audits", "UPDATE jobs SET audit = $2::jsonb WHERE id = $1::uuid",
                    [jobID, CanonicalJSON.encode(audit)])
    }

    public func auditRecord(_ identity: String) throws(StoreError) -> WorkerAudit? {
        try run("reading a worker's audit record", "SELECT \(WorkerAudit.columns) FROM worker_audits WHERE identity = $1", [identity])
            .first.map(WorkerAudit.init)
    }

    /// Counts one audit of `identity`'s result: it matched the other key's, or not.
    public func recordAudit(_ identity: String, worker: String, matched: Bool) throws(StoreError) {
        _ = try run("recording an audit", """
            INSERT INTO worker_audits (identity, worker_id, audited, matched, mismatched) VALUES ($1, $2, 1, $3::int, 1 - $3::int)
            ON CONFLICT (identity) DO UPDATE SET worker_id = EXCLUDED.worker_id, audited = worker_audits.audited + 1,
                matched = worker_audits.matched + EXCLUDED.matched, mismatched = worker_audits.mismatched + EXCLUDED.mismatched
            """, [identity, worker, matched ? "1" : "0"])
    }

    /// Quarantines `identity` (kept until `liftQuarantine`); the first reason stays.
    public func quarantine(_ identity: String, worker: String, reason: String) throws(StoreError) {
        _ = try run("quarantining a worker", """
            INSERT INTO worker_audits (identity, worker_id, quarantined_at, quarantine_reason) VALUES ($1, $2, now(), $3)
            ON CONFLICT (identity) DO UPDATE SET worker_id = EXCLUDED.worker_id,
                quarantined_at = coalesce(worker_audits.quarantined_at, now()),
                quarantine_reason = coalesce(worker_audits.quarantine_reason, EXCLUDED.quarantine_reason)
            """, [identity, worker, reason])
    }

    public func quarantinedIdentities() throws(StoreError) -> Set<String> {
        Set(try run("reading the quarantined keys", "SELECT identity FROM worker_audits WHERE quarantined_at IS NOT NULL").all.map { $0.string("identity") })
    }

    /// Every worker key's record, by worker id.
    public func workerAudits() throws(StoreError) -> [WorkerAudit] {
        try run("reading the workers' audit records", "SELECT \(WorkerAudit.columns) FROM worker_audits ORDER BY worker_id, identity")
            .all.map(WorkerAudit.init)
    }

    /// Lifts the quarantine of the key `identityOrWorker` names (its key, or the worker id it joined with);
    /// returns the keys lifted.
    @discardableResult
    public func liftQuarantine(_ identityOrWorker: String) throws(StoreError) -> [String] {
        try run("lifting a quarantine", """
            UPDATE worker_audits SET quarantined_at = NULL, quarantine_reason = NULL
            WHERE (identity = $1 OR worker_id = $1) AND quarantined_at IS NOT NULL RETURNING identity
            """, [identityOrWorker]).all.map { $0.string("identity") }
    }
}
