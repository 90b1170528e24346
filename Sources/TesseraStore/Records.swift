import Foundation
import PGClient
import TesseraCore

/// A job as the store holds it. The JSON form (`tessera status --json`) is stable for scripts: every key
/// is always there, null when unset.
public struct JobRecord: Encodable, Sendable, Equatable {
    public var id: String
    public var state: JobState
    public var input: String
    public var output: String
    public var spec: JobSpec
    public var settingsHash: String
    public var segmentsTotal: Int
    public var segmentsDone: Int
    /// Frames of every output: a ladder's counts each rung's.
    public var framesTotal: Int64
    /// Frames encoded: those of done segments and, while the job encodes, those its workers have encoded
    /// in tasks still in flight (reported about once a second); a ladder's, in every rung.
    public var framesDone: Int64
    /// Frames per second (of every output) over the last seconds while the job encodes; nil before there is a rate.
    public var fps: Double?
    /// That rate as seconds of video per second (1.0: real time); nil with it.
    public var speed: Double?
    public var error: String?
    public var createdAt: String
    public var updatedAt: String
    public var finishedAt: String?
    /// The coordinator that holds the job now (planned it, or took it over from one that went silent);
    /// nil while no coordinator has taken it.
    public var coordinator: String?
    /// The coordinator the job was submitted for (`submit --coordinator`); nil when any may take it.
    public var assignedCoordinator: String?
    /// Why the job is not progressing now (its results cannot be spooled, its output cannot be written);
    /// nil when nothing stops it.
    public var stalled: String?
    /// 0–100: higher priorities are planned and leased first.
    public var priority: Int
    /// A two-pass job's pass: 1 until its bits are allocated, then 2 (its frames count each pass from 0);
    /// nil for a one-pass job.
    public var pass: Int?
    /// What audits cost the job so far; nil while none of its segments was audited.
    public var audit: JobAudit?

    static let columns = """
        id::text AS id, state, input, output, settings::text AS settings, settings_hash, segments_total, segments_done,
        frames_total, frames_done, frames_encoding, outputs, fps, speed, error, coordinator, assigned_coordinator, stalled, priority, audit::text AS audit,
        EXISTS (SELECT 1 FROM segment_passes p WHERE p.job_id = jobs.id) AS second_pass,
        to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
        to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at,
        to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS finished_at
        """

    init(_ row: PGRow) throws(StoreError) {
        guard let state = JobState(rawValue: row.string("state")) else { throw StoreError("job \(row.string("id")) has unknown state \(row.string("state"))") }
        let spec: JobSpec
        do { spec = try CanonicalJSON.decode(JobSpec.self, from: Array(row.string("settings").utf8)) } catch {
            throw StoreError("job \(row.string("id")) has unreadable settings: \(error)")
        }
        id = row.string("id")
        self.state = state
        input = row.string("input")
        output = row.string("output")
        self.spec = spec
        settingsHash = row.string("settings_hash")
        segmentsTotal = row.int("segments_total") ?? 0
        segmentsDone = row.int("segments_done") ?? 0
        // The store counts source frames; a ladder makes each in every rung.
        let outputs = Int64(max(row.int("outputs") ?? 1, 1))
        framesTotal = row.int64("frames_total") ?? 0
        framesDone = row.int64("frames_done") ?? 0
        if state == .encoding { framesDone = min(framesDone + (row.int64("frames_encoding") ?? 0), framesTotal) }
        framesTotal *= outputs
        framesDone *= outputs
        fps = state == .encoding ? row.double("fps").flatMap { $0 > 0 ? $0 * Double(outputs) : nil } : nil
        speed = fps == nil ? nil : row.double("speed")
        error = row["error"]
        createdAt = row.string("created_at")
        updatedAt = row.string("updated_at")
        finishedAt = row["finished_at"]
        coordinator = row["coordinator"]
        assignedCoordinator = row["assigned_coordinator"]
        stalled = row["stalled"]
        priority = row.int("priority") ?? 50
        pass = spec.twoPass ? (row.bool("second_pass") == true ? 2 : 1) : nil
        audit = row["audit"].flatMap { try? CanonicalJSON.decode(JobAudit.self, from: Array($0.utf8)) }
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case id, state, input, output, spec, rungs, settingsHash, segmentsTotal, segmentsDone, framesTotal, framesDone, fps, speed, etaSeconds, error,
             createdAt, updatedAt, finishedAt, coordinator, assignedCoordinator, stalled, priority, pass, audit
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(state, forKey: .state)
        try c.encode(input, forKey: .input)
        try c.encode(output, forKey: .output)
        try c.encode(JobSpecJSON(spec: spec), forKey: .spec)
        try c.encode(spec.ladder?.rungNames, forKey: .rungs)
        try c.encode(settingsHash, forKey: .settingsHash)
        try c.encode(segmentsTotal, forKey: .segmentsTotal)
        try c.encode(segmentsDone, forKey: .segmentsDone)
        try c.encode(framesTotal, forKey: .framesTotal)
        try c.encode(framesDone, forKey: .framesDone)
        try c.encode(fps.map { ($0 * 10).rounded() / 10 }, forKey: .fps)
        try c.encode(speed.map { ($0 * 100).rounded() / 100 }, forKey: .speed)
        try c.encode(etaSeconds.map { $0.rounded() }, forKey: .etaSeconds)
        // encode, not encodeIfPresent: an unset value is written as null.
        try c.encode(error, forKey: .error)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encode(finishedAt, forKey: .finishedAt)
        try c.encode(coordinator, forKey: .coordinator)
        try c.encode(assignedCoordinator, forKey: .assignedCoordinator)
        try c.encode(stalled, forKey: .stalled)
        try c.encode(priority, forKey: .priority)
        try c.encode(pass, forKey: .pass)
        try c.encode(audit, forKey: .audit)
    }

    /// Seconds left at the current rate while the job encodes (the stitch not counted; in a first pass, the
    /// second pass's frames counted at that rate); nil without a rate.
    public var etaSeconds: Double? {
        guard state == .encoding, let fps, fps > 0 else { return nil }
        return Double(max(framesTotal - framesDone, 0) + (pass == 1 ? framesTotal : 0)) / fps
    }

    public var progress: Double {
        framesTotal > 0 ? Double(framesDone) / Double(framesTotal) : (state == .done ? 1 : 0)
    }
}

/// A segment row.
public struct SegmentRecord: Codable, Sendable, Equatable {
    public var jobID: String
    public var index: Int
    public var startPTS: Int64
    public var endPTS: Int64
    public var frameCount: Int
    public var state: SegmentState
    public var attempts: Int
    public var workerID: String?
    public var resultPath: String?
    /// Where the result starts in `resultPath` (results of a job share one spool file).
    public var resultOffset: Int64
    public var checksum: String?
    public var sizeBytes: Int64?
    public var encodeSeconds: Double?
    public var lastError: String?

    static let columns = """
        job_id::text AS job_id, index, start_pts, end_pts, frame_count, state, attempts, worker_id, result_path,
        result_offset, checksum, size_bytes, encode_seconds, last_error
        """

    init(_ row: PGRow) {
        jobID = row.string("job_id")
        index = row.int("index") ?? -1
        startPTS = row.int64("start_pts") ?? 0
        endPTS = row.int64("end_pts") ?? 0
        frameCount = row.int("frame_count") ?? 0
        state = SegmentState(rawValue: row.string("state")) ?? .failed
        attempts = row.int("attempts") ?? 0
        workerID = row["worker_id"]
        resultPath = row["result_path"]
        resultOffset = row.int64("result_offset") ?? 0
        checksum = row["checksum"]
        sizeBytes = row.int64("size_bytes")
        encodeSeconds = row.double("encode_seconds")
        lastError = row["last_error"]
    }
}

/// One entry of a job's append-only event log.
public struct JobEvent: Codable, Sendable, Equatable {
    public var id: Int64
    public var jobID: String
    public var segmentIndex: Int?
    public var from: String?
    public var to: String
    public var detail: String?
    public var at: String

    init(_ row: PGRow) {
        id = row.int64("id") ?? 0
        jobID = row.string("job_id")
        segmentIndex = row.int("segment_index")
        from = row["from_state"]
        to = row.string("to_state")
        detail = row["detail"]
        at = row.string("at")
    }

    /// The worker a segment was leased to: the store writes "worker ID" as a lease's detail
    /// (`tessera_segment_changed` in migration 0001).
    public var worker: String? {
        guard to == SegmentState.leased.rawValue, let detail, detail.hasPrefix("worker ") else { return nil }
        return String(detail.dropFirst("worker ".count))
    }
}

/// A segment leased to a worker until `expiresAt`.
public struct Lease: Sendable, Equatable, Hashable {
    public var jobID: String
    public var index: Int
    public var startPTS: Int64
    public var endPTS: Int64
    public var frameCount: Int
    public var attempts: Int
    /// The lease's token (`lease_token`): its task carries it, and so must its result.
    public var token: String

    /// From a segment row (the lease columns are a segment's).
    init(_ row: PGRow) {
        let segment = SegmentRecord(row)
        jobID = segment.jobID
        index = segment.index
        startPTS = segment.startPTS
        endPTS = segment.endPTS
        frameCount = segment.frameCount
        attempts = segment.attempts
        token = row["lease_token"] ?? ""
    }
}

/// What a worker reports when it finishes a segment.
public struct SegmentResult: Sendable {
    /// The spool file, and where in it the result's `sizeBytes` bytes start.
    public var path: String
    public var offset: Int64
    public var checksum: String
    public var sizeBytes: Int64
    public var encodeSeconds: Double

    public init(path: String, offset: Int64 = 0, checksum: String, sizeBytes: Int64, encodeSeconds: Double) {
        self.path = path
        self.offset = offset
        self.checksum = checksum
        self.sizeBytes = sizeBytes
        self.encodeSeconds = encodeSeconds
    }
}
