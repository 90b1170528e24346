import Foundation
import Synchronization
import TesseraCore
import TesseraStore
import ZMQKit

/// A job store held in memory, shared by its sessions (`InMemoryCoordinatorStore`), for running a coordinator in a
/// test without PostgreSQL. It keeps the rules of the migrations' schema that the coordinator depends on: the
/// allowed state transitions, the job's counters kept by the segment trigger, the events log, and a notification
/// to every listening session whenever a job changes.
public final class InMemoryJobDatabase: Sendable {
    let tables = Mutex(Tables())

    public init() {}

    /// Opens sessions of this database; `migrate` and `patience` have nothing to do here.
    public var sessions: CoordinatorStoreSessions {
        CoordinatorStoreSessions { _, _ throws(StoreError) in InMemoryCoordinatorStore(self) }
    }

    /// A new session.
    public func open() -> InMemoryCoordinatorStore { InMemoryCoordinatorStore(self) }

    /// Queues a job, as `JobStore.submit` does; returns its id.
    public func submit(input: String, output: String, spec: JobSpec, coordinator: String? = nil,
                       priority: Int = JobStore.defaultPriority, id given: String? = nil, work: Double? = nil) throws(StoreError) -> String {
        guard JobStore.priorities.contains(priority) else { throw StoreError("priority \(priority) is not between 0 and 100") }
        let id = given ?? UUID().uuidString.lowercased()
        try tables.withLock { (t: inout Tables) throws(StoreError) in
            guard t.jobs[id] == nil else { throw StoreError("job \(id) exists already") }
            t.sequence += 1
            t.jobs[id] = JobRow(id: id, input: input, output: output, spec: spec, priority: priority, assignedCoordinator: coordinator,
                                created: t.sequence, createdAt: Tables.now)
            t.jobs[id]?.submittedWork = work
            t.segments[id] = [:]
            t.log(Event(jobID: id, segmentIndex: nil, from: nil, to: JobState.queued.rawValue, detail: nil))
            t.notify(id)
        }
        return id
    }

    /// The job's events, oldest first.
    public func events(_ jobID: String) -> [Event] {
        tables.withLock { $0.events.filter { $0.jobID == jobID } }
    }

    /// One entry of a job's event log (the `job_events` rows the triggers write).
    public struct Event: Sendable, Equatable {
        public var jobID: String
        public var segmentIndex: Int?
        public var from: String?
        public var to: String
        public var detail: String?

        /// The worker a segment was leased to (the trigger's "worker ID" detail).
        public var leasedTo: String? {
            guard to == SegmentState.leased.rawValue, let detail, detail.hasPrefix("worker ") else { return nil }
            return String(detail.dropFirst("worker ".count))
        }
    }
}

/// A session that listens: the changes it has not read yet, and a descriptor readable while there are some.
final class ChangeListener: Sendable {
    let doorbell = Doorbell()
    let changes = Mutex<[(id: String, state: JobState?)]>([])

    func post(_ id: String, _ state: JobState) {
        changes.withLock { $0.append((id, state)) }
        doorbell.ring()
    }

    /// The changes waiting, now read; the descriptor stays quiet until the next.
    func take() -> [(id: String, state: JobState?)] {
        doorbell.answer()
        return changes.withLock { changes in
            defer { changes.removeAll() }
            return changes
        }
    }
}

struct JobRow {
    var id: String
    var state = JobState.queued
    var input: String
    var output: String
    var spec: JobSpec
    var priority: Int
    var assignedCoordinator: String?
    var coordinator: String?
    var segmentsTotal = 0
    var segmentsDone = 0
    var framesTotal: Int64 = 0
    var framesDone: Int64 = 0
    var framesEncoding: Int64 = 0
    var framePixels: Int?
    /// Pixels to encode as estimated at submit (`submitted_work`).
    var submittedWork: Double?
    var fps: Double?
    var speed: Double?
    var error: String?
    var extradata: String?
    var inputIdentity: String?
    var stalled: String?
    var stalledSince: Double?
    var secondPass: [Int: [PassInput]]?
    /// Outputs the job makes (a ladder's rungs): its progress counts the frames of each.
    var outputs = 1
    var audit: JobAudit?
    /// Submission order (`created_at`).
    var created: Int
    var createdAt: Double
    var updatedAt: Double
    var finishedAt: Double?

    init(id: String, input: String, output: String, spec: JobSpec, priority: Int, assignedCoordinator: String?, created: Int,
         createdAt: Double) {
        self.id = id
        self.input = input
        self.output = output
        self.spec = spec
        self.priority = priority
        self.assignedCoordinator = assignedCoordinator
        self.created = created
        self.createdAt = createdAt
        updatedAt = createdAt
    }
}

struct SegmentRow {
    var plan: PlannedSegment
    var state = SegmentState.pending
    var attempts = 0
    var workerID: String?
    var leaseExpires: Double?
    var leaseToken: String?
    var resultPath: String?
    var resultOffset: Int64 = 0
    var checksum: String?
    var sizeBytes: Int64?
    var encodeSeconds: Double?
    var lastError: String?

    /// Its result is no longer the segment's (encoded again).
    mutating func forgetResult() {
        resultPath = nil
        resultOffset = 0
        checksum = nil
        sizeBytes = nil
    }

    var lease: Lease {
        Lease(jobID: "", index: plan.index, startPTS: plan.startPTS, endPTS: plan.endPTS, frameCount: plan.frameCount,
              attempts: attempts, token: leaseToken ?? "")
    }
}

/// The database's rows, and the triggers of the migrations as the functions that change them.
struct Tables {
    var jobs: [String: JobRow] = [:]
    /// Each job's segments by index.
    var segments: [String: [Int: SegmentRow]] = [:]
    /// Workers' public keys (nil: none bound), by id.
    var workerKeys: [String: String?] = [:]
    /// Worker keys' audit records, by key.
    var audits: [String: WorkerAudit] = [:]
    /// Coordinators' last heartbeat, by id.
    var coordinators: [String: Double] = [:]
    var events: [InMemoryJobDatabase.Event] = []
    var listeners: [ObjectIdentifier: ChangeListener] = [:]
    var sequence = 0

    static var now: Double { Date().timeIntervalSince1970 }

    mutating func log(_ event: InMemoryJobDatabase.Event) { events.append(event) }

    /// `pg_notify` of the jobs trigger: every change of a job's row.
    mutating func notify(_ id: String) {
        guard let state = jobs[id]?.state else { return }
        jobs[id]?.updatedAt = Self.now
        for listener in listeners.values { listener.post(id, state) }
    }

    func job(_ idOrPrefix: String) throws(StoreError) -> JobRow {
        try JobStore.validateID(idOrPrefix)
        let key = idOrPrefix.lowercased()
        if let row = jobs[key] { return row }
        let matches = jobs.values.filter { $0.id.hasPrefix(key) }
        guard let first = matches.min(by: { $0.created < $1.created }) else { throw StoreError("no job \(idOrPrefix)") }
        guard matches.count == 1 else { throw StoreError("job id prefix \(idOrPrefix) is ambiguous") }
        return first
    }

    /// A job's state changes, as the jobs triggers allow and record it.
    mutating func move(_ id: String, to state: JobState, error: String? = nil) throws(StoreError) {
        guard var row = jobs[id] else { return }
        guard row.state != state else { return }
        guard row.state.canMove(to: state) else { throw StoreError("job cannot go from \(row.state.rawValue) to \(state.rawValue)") }
        let from = row.state
        row.state = state
        row.error = error ?? row.error
        row.finishedAt = state.isFinal ? (row.finishedAt ?? Self.now) : nil
        jobs[id] = row
        log(.init(jobID: id, segmentIndex: nil, from: from.rawValue, to: state.rawValue, detail: row.error))
        notify(id)
    }

    /// A segment's state changes with `edit`, as the segments triggers allow and record it, keeping the job's counters.
    mutating func move(_ job: String, _ index: Int, to state: SegmentState, _ edit: (inout SegmentRow) -> Void = { _ in }) throws(StoreError) {
        guard var row = segments[job]?[index] else { return }
        let from = row.state
        guard from == state || from.canMove(to: state) else {
            throw StoreError("segment cannot go from \(from.rawValue) to \(state.rawValue)")
        }
        row.state = state
        edit(&row)
        segments[job]?[index] = row
        guard from != state else { return }
        log(.init(jobID: job, segmentIndex: index, from: from.rawValue, to: state.rawValue,
                  detail: state == .leased ? row.workerID.map { "worker \($0)" } : row.lastError))
        let frames = Int64(row.plan.frameCount)
        guard var counters = jobs[job], state == .done || from == .done else { return }
        if state == .done {
            counters.segmentsDone += 1
            counters.framesDone += frames
            counters.framesEncoding = max(counters.framesEncoding - frames, 0)
        } else {
            counters.segmentsDone -= 1
            counters.framesDone -= frames
        }
        jobs[job] = counters
        notify(job)
    }

    /// Records `value` in the job's `field` unless one is recorded already; returns the recorded one (`value` when
    /// there is no such job).
    mutating func recordOnce(_ job: String, _ field: WritableKeyPath<JobRow, String?>, _ value: String) -> String {
        guard let row = jobs[job] else { return value }
        let recorded = row[keyPath: field] ?? value
        jobs[job]?[keyPath: field] = recorded
        notify(job)
        return recorded
    }

    /// Every segment of `job` in `states`, by index.
    func indices(_ job: String, in states: Set<SegmentState>) -> [Int] {
        (segments[job] ?? [:]).filter { states.contains($0.value.state) }.keys.sorted()
    }

    /// Jobs `coordinator` holds (every job when nil).
    func held(by coordinator: String?) -> [JobRow] {
        jobs.values.filter { coordinator == nil || $0.coordinator == coordinator }
    }

    /// The queued jobs `coordinator` may claim; with `outranking`, only those of a higher priority than every one
    /// of its jobs with work pending (none when it has none), as `JobStore.claimQueuedJob` selects them.
    func claimable(by coordinator: String, outranking: Bool) -> [JobRow] {
        let pendingPriority = held(by: coordinator)
            .filter { $0.state == .encoding && $0.stalled == nil && !indices($0.id, in: [.pending]).isEmpty }
            .map(\.priority).max()
        return jobs.values.filter { row in
            row.state == .queued && (row.assignedCoordinator == nil || row.assignedCoordinator == coordinator)
                && (!outranking || pendingPriority.map { row.priority > $0 } == true)
        }
    }

    /// Moves a queued job to planning by `coordinator`; returns it.
    mutating func claim(_ id: String, for coordinator: String) throws(StoreError) -> JobRecord {
        jobs[id]?.coordinator = coordinator
        try move(id, to: .planning)
        return record(jobs[id]!)
    }

    func record(_ row: JobRow) -> JobRecord {
        let encoding = row.state == .encoding
        let fps = encoding ? row.fps.flatMap { $0 > 0 ? $0 * Double(row.outputs) : nil } : nil
        let done = encoding ? min(row.framesDone + row.framesEncoding, row.framesTotal) : row.framesDone
        return JobRecord(id: row.id, state: row.state, input: row.input, output: row.output, spec: row.spec, settingsHash: row.spec.digest,
                         segmentsTotal: row.segmentsTotal, segmentsDone: row.segmentsDone, framesTotal: row.framesTotal * Int64(row.outputs),
                         framesDone: done * Int64(row.outputs), fps: fps, speed: fps == nil ? nil : row.speed, error: row.error, createdAt: Self.timestamp(row.createdAt),
                         updatedAt: Self.timestamp(row.updatedAt), finishedAt: row.finishedAt.map(Self.timestamp),
                         coordinator: row.coordinator, assignedCoordinator: row.assignedCoordinator, stalled: row.stalled,
                         priority: row.priority, pass: row.spec.twoPass ? (row.secondPass == nil ? 1 : 2) : nil, audit: row.audit)
    }

    func record(_ job: String, _ row: SegmentRow) -> SegmentRecord {
        SegmentRecord(jobID: job, index: row.plan.index, startPTS: row.plan.startPTS, endPTS: row.plan.endPTS, frameCount: row.plan.frameCount,
                      state: row.state, attempts: row.attempts, workerID: row.workerID, resultPath: row.resultPath,
                      resultOffset: row.resultOffset, checksum: row.checksum, sizeBytes: row.sizeBytes, encodeSeconds: row.encodeSeconds,
                      lastError: row.lastError)
    }

    func lease(_ job: String, _ row: SegmentRow) -> Lease {
        var lease = row.lease
        lease.jobID = job
        return lease
    }

    static func timestamp(_ seconds: Double) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: seconds))
    }
}
