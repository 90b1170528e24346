import Foundation
import Glibc
import TesseraCore
import TesseraStore

/// A session of an `InMemoryJobDatabase`: the coordinator's store without PostgreSQL. Each call is one
/// transaction under the database's lock, doing what the `JobStore` statement of that name does. Notifications:
/// a listening session's `changesDescriptor` is a pipe rung at each job change, so the loop wakes as it does for
/// PostgreSQL's socket.
public final class InMemoryCoordinatorStore: CoordinatorStore {
    let database: InMemoryJobDatabase
    private var listener: ChangeListener?
    private var closed = false

    init(_ database: InMemoryJobDatabase) {
        self.database = database
    }

    deinit { close() }

    /// Runs `body` as one transaction.
    func transaction<R: Sendable>(_ body: (inout Tables) throws(StoreError) -> R) throws(StoreError) -> R {
        guard !closed else { throw StoreError("the session is closed") }
        return try database.tables.withLock { (t: inout Tables) throws(StoreError) -> R in try body(&t) }
    }

    // MARK: Session

    public var queryTime: Double { 0 }
    public var sessions: Int { 1 }
    public var isConnected: Bool { !closed }

    public func close() {
        guard !closed else { return }
        closed = true
        if let listener { database.tables.withLock { _ = $0.listeners.removeValue(forKey: ObjectIdentifier(listener)) } }
        listener = nil
    }

    public func commitWithoutWaitingForFlush() throws(StoreError) {}
    public func planStatementsOnce() throws(StoreError) {}

    // MARK: Notifications

    public func listen() throws(StoreError) {
        guard listener == nil else { return }
        let listener = ChangeListener()
        self.listener = listener
        try transaction { $0.listeners[ObjectIdentifier(listener)] = listener }
    }

    public var changesDescriptor: Int32? { listener.flatMap { $0.doorbell.isValid ? $0.doorbell.fd : nil } }

    public var hasChanges: Bool { listener?.changes.withLock { !$0.isEmpty } ?? false }

    public func waitForJobChanges(timeout: TimeInterval) throws(StoreError) -> [(id: String, state: JobState?)] {
        guard let listener else { return [] }
        if timeout > 0, !hasChanges, listener.doorbell.isValid {
            var wait = pollfd(fd: listener.doorbell.fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&wait, 1, Int32(min(timeout, 3600) * 1000))
        }
        return listener.take()
    }

    // MARK: Jobs

    public func job(_ idOrPrefix: String) throws(StoreError) -> JobRecord {
        try transaction { t throws(StoreError) in t.record(try t.job(idOrPrefix)) }
    }

    public func jobIDs(in state: JobState, coordinator: String?) throws(StoreError) -> [String] {
        try transaction { t in t.held(by: coordinator).filter { $0.state == state }.sorted { $0.created < $1.created }.map(\.id) }
    }

    public func setState(_ id: String, to state: JobState, error: String?) throws(StoreError) {
        try transaction { t throws(StoreError) in
            let current = try t.job(id)
            guard current.state.canMove(to: state) else {
                throw StoreError("job \(id) cannot go from \(current.state.rawValue) to \(state.rawValue)")
            }
            try t.move(current.id, to: state, error: error)
        }
    }

    public func claimQueuedJob(coordinator: String, only job: String?, outranking: Bool) throws(StoreError) -> JobRecord? {
        try transaction { t throws(StoreError) in
            let candidates = t.claimable(by: coordinator, outranking: outranking).filter { job == nil || $0.id == job?.lowercased() }
            guard let claimed = candidates.min(by: { ($1.priority, $0.created) < ($0.priority, $1.created) }) else { return nil }
            return try t.claim(claimed.id, for: coordinator)
        }
    }

    public func queuedJobs(coordinator: String) throws(StoreError) -> [QueuedJob] {
        try transaction { t in
            t.claimable(by: coordinator, outranking: false).map {
                QueuedJob(id: $0.id, priority: $0.priority, waited: max(0, Tables.now - $0.createdAt), work: $0.submittedWork)
            }
        }
    }

    public func claimQueuedJob(coordinator: String, ranked: [String], outranking: Bool) throws(StoreError) -> JobRecord? {
        try transaction { t throws(StoreError) in
            let candidates = Set(t.claimable(by: coordinator, outranking: outranking).map(\.id))
            guard let first = ranked.first(where: candidates.contains) else { return nil }
            return try t.claim(first, for: coordinator)
        }
    }

    public func addSegments(_ jobID: String, _ segments: [PlannedSegment], framePixels: Int?, outputs: Int = 1) throws(StoreError) -> Bool {
        try transaction { t throws(StoreError) in
            guard t.jobs[jobID]?.state == .planning else { return false }
            for segment in segments where t.segments[jobID]?[segment.index] == nil {
                t.segments[jobID, default: [:]][segment.index] = SegmentRow(plan: segment)
            }
            t.jobs[jobID]?.segmentsTotal = segments.count
            t.jobs[jobID]?.framesTotal = Int64(segments.reduce(0) { $0 + $1.frameCount })
            t.jobs[jobID]?.framePixels = framePixels
            t.jobs[jobID]?.outputs = max(outputs, 1)
            try t.move(jobID, to: .encoding)
            return true
        }
    }

    public func load(coordinator: String, priority: Int) throws(StoreError) -> ClusterLoad {
        try transaction { t in
            let unknown = Double(1280 * 720)
            var leased = 0, leasedWork = 0.0, pendingWork = 0.0, encodedWork = 0.0
            for job in t.held(by: coordinator) where job.state == .encoding {
                let pixels = job.framePixels.map(Double.init) ?? unknown
                encodedWork += Double(job.framesEncoding) * pixels
                for segment in (t.segments[job.id] ?? [:]).values {
                    if segment.state == .leased {
                        leased += 1
                        leasedWork += Double(segment.plan.frameCount) * pixels
                    } else if segment.state == .pending, job.priority >= priority {
                        pendingWork += Double(segment.plan.frameCount) * pixels
                    }
                }
            }
            let newest = t.jobs.values.map(\.createdAt).max()
            return ClusterLoad(encoders: leased, freeEncoders: 0, leasedWork: max(0, leasedWork - encodedWork), pendingWork: pendingWork,
                               queuedJobs: t.jobs.values.filter { $0.state == .queued }.count,
                               quietSeconds: newest.map { Tables.now - $0 } ?? .infinity)
        }
    }

    public func pinInput(_ job: String, identity json: String) throws(StoreError) -> String {
        try transaction { t in t.recordOnce(job, \.inputIdentity, json) }
    }

    public func referenceExtradata(_ jobID: String, proposing hex: String) throws(StoreError) -> String {
        try transaction { t in t.recordOnce(jobID, \.extradata, hex) }
    }

    public func secondPass(_ jobID: String) throws(StoreError) -> [Int: [PassInput]]? {
        try transaction { t in t.jobs[jobID]?.secondPass }
    }

    public func startSecondPass(_ jobID: String, coordinator: String, _ passes: [Int: [PassInput]]) throws(StoreError) -> Bool {
        try transaction { t throws(StoreError) in
            guard let job = t.jobs[jobID], job.state == .encoding, job.coordinator == coordinator else { return false }
            guard job.secondPass == nil else { throw StoreError("job \(jobID): second pass already recorded") }
            t.jobs[jobID]?.secondPass = passes
            for index in t.indices(jobID, in: [.done]) {
                try t.move(jobID, index, to: .pending) {
                    $0.forgetResult()
                    $0.lastError = nil
                    $0.attempts = 0
                }
            }
            t.notify(jobID)
            return true
        }
    }

    public func recordProgress(_ job: String, framesEncoding: Int, fps: Double?, speed: Double?) throws(StoreError) {
        try transaction { t in
            guard let row = t.jobs[job], row.state == .encoding else { return }
            // As the statement stores them: fps to 3 decimals, speed to 4.
            let fps = fps.map { ($0 * 1000).rounded() / 1000 }, speed = speed.map { ($0 * 10000).rounded() / 10000 }
            guard (row.framesEncoding, row.fps, row.speed) != (Int64(framesEncoding), fps, speed) else { return }
            t.jobs[job]?.framesEncoding = Int64(framesEncoding)
            t.jobs[job]?.fps = fps
            t.jobs[job]?.speed = speed
            t.notify(job)
        }
    }

    public func setStalled(_ job: String, reason: String?) throws(StoreError) -> Double {
        try transaction { t in
            guard let row = t.jobs[job] else { return 0 }
            if row.stalled != reason {
                t.jobs[job]?.stalled = reason
                t.jobs[job]?.stalledSince = reason == nil ? nil : (row.stalledSince ?? Tables.now)
                t.log(.init(jobID: job, segmentIndex: nil, from: nil, to: reason == nil ? "resumed" : "stalled", detail: reason ?? "the fault cleared"))
                t.notify(job)
            }
            return t.jobs[job]?.stalledSince.map { Tables.now - $0 } ?? 0
        }
    }

    // MARK: Segments and leases

    public func plannedSegments(_ jobID: String) throws(StoreError) -> [PlannedSegment] {
        try transaction { t in (t.segments[jobID] ?? [:]).values.map(\.plan).sorted { $0.index < $1.index } }
    }

    public func segments(_ jobID: String) throws(StoreError) -> [SegmentRecord] {
        try transaction { t in (t.segments[jobID] ?? [:]).sorted { $0.key < $1.key }.map { t.record(jobID, $0.value) } }
    }

    public func redo(_ jobID: String, _ index: Int, reason: String, countingAttempt: Bool) throws(StoreError) {
        try transaction { t throws(StoreError) in
            guard t.segments[jobID]?[index]?.state == .done else { return }
            try t.move(jobID, index, to: .pending) {
                $0.forgetResult()
                $0.lastError = reason
                if countingAttempt { $0.attempts += 1 }
            }
        }
    }

    /// The order of `JobStore.lease(slots:)`: higher priorities first; within one, a segment's place is the leases its
    /// job holds plus its rank in the job (longest first), then the oldest job.
    public func lease(slots: [String], seconds: Double, jobs: [String]?, attemptLimit: Int,
                      coordinator: String?) throws(StoreError) -> [(worker: String, lease: Lease)] {
        try lease(slots: slots, seconds: seconds, attemptLimit: attemptLimit, coordinator: coordinator,
                  including: { jobs == nil || jobs?.contains($0) == true }) { a, b in
            (b.job.priority, a.place, a.job.created, b.seconds ?? -1, b.frames, a.index)
                < (a.job.priority, b.place, b.job.created, a.seconds ?? -1, a.frames, b.index)
        }
    }

    /// The order of `JobStore.lease(slots:ranked:)`: the jobs of `ranked` in turn, longest segments first within one.
    public func lease(slots: [String], seconds: Double, ranked: [String], attemptLimit: Int,
                      coordinator: String?) throws(StoreError) -> [(worker: String, lease: Lease)] {
        let turns = Dictionary(ranked.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { first, _ in first })
        return try lease(slots: slots, seconds: seconds, attemptLimit: attemptLimit, coordinator: coordinator,
                         including: { turns[$0] != nil }) { a, b in
            (turns[a.job.id] ?? 0, b.seconds ?? -1, b.frames, a.index) < (turns[b.job.id] ?? 0, a.seconds ?? -1, a.frames, b.index)
        }
    }

    /// A pending segment that may be leased: its job, its place (the leases its job holds plus its rank in the job,
    /// longest first), its last encode's seconds and its frames.
    struct LeaseCandidate { var job: JobRow, index: Int, place: Int, seconds: Double?, frames: Int }

    /// Leases one candidate per slot, of the encoding jobs `including` takes, in the order `precedes` gives.
    private func lease(slots: [String], seconds: Double, attemptLimit: Int, coordinator: String?, including: (String) -> Bool,
                       precedes: (LeaseCandidate, LeaseCandidate) -> Bool) throws(StoreError) -> [(worker: String, lease: Lease)] {
        guard !slots.isEmpty else { return [] }
        return try transaction { t throws(StoreError) in
            // A lease names a registered worker (the foreign key).
            if let unknown = slots.first(where: { t.workerKeys[$0] == nil }) { throw StoreError("leasing segments: no worker \(unknown)") }
            var candidates: [LeaseCandidate] = []
            for job in t.held(by: coordinator) where job.state == .encoding && including(job.id) {
                let rows = t.segments[job.id] ?? [:]
                let holding = rows.values.filter { $0.state == .leased }.count
                let pending = rows.values.filter { $0.state == .pending && $0.attempts < attemptLimit }.sorted {
                    ($0.encodeSeconds ?? -1, $0.plan.frameCount, -$0.plan.index) > ($1.encodeSeconds ?? -1, $1.plan.frameCount, -$1.plan.index)
                }
                for (rank, row) in pending.enumerated() {
                    candidates.append(LeaseCandidate(job: job, index: row.plan.index, place: holding + rank + 1, seconds: row.encodeSeconds,
                                                     frames: row.plan.frameCount))
                }
            }
            candidates.sort(by: precedes)
            var leased: [(worker: String, lease: Lease)] = []
            for (worker, candidate) in zip(slots, candidates) {
                try t.move(candidate.job.id, candidate.index, to: .leased) {
                    $0.workerID = worker
                    $0.leaseExpires = Tables.now + seconds
                    $0.leaseToken = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
                }
                leased.append((worker, t.lease(candidate.job.id, t.segments[candidate.job.id]![candidate.index]!)))
            }
            return leased
        }
    }

    public func leases(worker: String, coordinator: String?) throws(StoreError) -> [Lease] {
        try transaction { t in
            t.held(by: coordinator).sorted { $0.id < $1.id }.flatMap { job in
                t.indices(job.id, in: [.leased]).compactMap { index in
                    t.segments[job.id]?[index].flatMap { $0.workerID == worker ? t.lease(job.id, $0) : nil }
                }
            }
        }
    }

    public func leaseHolders(coordinator: String?) throws(StoreError) -> [String] {
        try transaction { t in
            Array(Set(t.held(by: coordinator).flatMap { job in (t.segments[job.id] ?? [:]).values.filter { $0.state == .leased }.compactMap(\.workerID) }))
        }
    }

    public func renewAll(worker: String, seconds: Double, coordinator: String?) throws(StoreError) {
        try transaction { t in
            for job in t.held(by: coordinator) {
                for index in t.indices(job.id, in: [.leased]) where t.segments[job.id]?[index]?.workerID == worker {
                    t.segments[job.id]?[index]?.leaseExpires = Tables.now + seconds
                }
            }
        }
    }

    public func release(_ jobID: String, _ index: Int, worker: String, token: String?, error: String?) throws(StoreError) -> Bool {
        try transaction { t throws(StoreError) in
            guard let row = t.segments[jobID]?[index], row.state == .leased, row.workerID == worker,
                  token == nil || row.leaseToken == token else { return false }
            try t.move(jobID, index, to: .pending) {
                $0.leaseExpires = nil
                $0.workerID = nil
                $0.attempts += error == nil ? 0 : 1
                $0.lastError = error ?? $0.lastError
            }
            return true
        }
    }

    public func releaseAll(worker: String, reason: String, countAttempt: Bool, coordinator: String?) throws(StoreError) -> Int {
        try transaction { t throws(StoreError) in
            var returned = 0
            for job in t.held(by: coordinator) {
                for index in t.indices(job.id, in: [.leased]) where t.segments[job.id]?[index]?.workerID == worker {
                    try t.move(job.id, index, to: .pending) {
                        $0.leaseExpires = nil
                        $0.workerID = nil
                        $0.attempts += countAttempt ? 1 : 0
                        $0.lastError = reason
                    }
                    returned += 1
                }
            }
            return returned
        }
    }

    public func reapExpiredLeases(attemptLimit: Int) throws(StoreError) -> (returned: [Lease], failedJobs: [String]) {
        try transaction { t throws(StoreError) in
            let now = Tables.now
            var returned: [Lease] = []
            for job in t.jobs.keys.sorted() {
                for index in t.indices(job, in: [.leased]) {
                    guard let row = t.segments[job]?[index], let expires = row.leaseExpires, expires < now else { continue }
                    try t.move(job, index, to: .pending) {
                        $0.leaseExpires = nil
                        $0.attempts += 1
                        $0.lastError = "lease expired (worker \(row.workerID ?? ""))"
                        $0.workerID = nil
                    }
                    returned.append(t.lease(job, t.segments[job]![index]!))
                }
            }
            // Every exhausted segment fails first (one statement), then the jobs they belong to.
            var exhausted: [(job: String, index: Int, row: SegmentRow)] = []
            for job in t.jobs.keys.sorted() {
                for index in t.indices(job, in: [.pending]) {
                    guard let row = t.segments[job]?[index], row.attempts >= attemptLimit else { continue }
                    try t.move(job, index, to: .failed)
                    exhausted.append((job, index, row))
                }
            }
            var failedJobs: [String] = []
            for (job, index, row) in exhausted {
                guard let state = t.jobs[job]?.state, [.planning, .encoding, .stitching].contains(state) else { continue }
                try t.move(job, to: .failed, error: "segment \(index) failed after \(row.attempts) attempts: \(row.lastError ?? "no error recorded")")
                failedJobs.append(job)
                for other in t.indices(job, in: [.pending, .leased]) {
                    try t.move(job, other, to: .canceled) {
                        $0.leaseExpires = nil
                        $0.lastError = "job failed"
                    }
                }
            }
            return (returned, failedJobs)
        }
    }

    public func complete(_ completions: [JobStore.Completion]) throws(StoreError) -> Set<Int> {
        try transaction { t throws(StoreError) in
            var counted: Set<Int> = []
            // One completion per segment and worker: the first (`DISTINCT ON`), whether or not it counts.
            var seen: Set<[String]> = []
            for (position, c) in completions.enumerated() {
                guard seen.insert([c.jobID.lowercased(), String(c.index), c.worker]).inserted, let row = t.segments[c.jobID.lowercased()]?[c.index], row.state == .leased, row.workerID == c.worker,
                      row.leaseToken == c.token else { continue }
                try t.move(c.jobID.lowercased(), c.index, to: .done) {
                    $0.leaseExpires = nil
                    $0.resultPath = c.result.path
                    $0.resultOffset = c.result.offset
                    $0.checksum = c.result.checksum
                    $0.sizeBytes = c.result.sizeBytes
                    $0.encodeSeconds = c.result.encodeSeconds
                }
                counted.insert(position)
            }
            return counted
        }
    }

    public func recordJobAudit(_ jobID: String, _ audit: JobAudit) throws(StoreError) {
        try transaction { t in t.jobs[jobID]?.audit = audit }
    }

    public func recordNote(_ jobID: String, kind: String, detail: String) throws(StoreError) {
        try transaction { t in
            guard t.jobs[jobID] != nil else { return }
            t.log(.init(jobID: jobID, segmentIndex: nil, from: nil, to: kind, detail: detail))
        }
    }

    public func recordRefusal(_ jobID: String, _ index: Int, worker: String, reason: String) throws(StoreError) {
        try transaction { t in
            guard t.jobs[jobID] != nil else { return }
            t.log(.init(jobID: jobID, segmentIndex: index, from: nil, to: "refused", detail: "worker \(worker): \(reason)"))
        }
    }

    // MARK: Workers and coordinators

    public func heartbeat(worker: String, host: String, capabilities: [String: String], key: String?) throws(StoreError) -> Bool {
        try transaction { t in
            if let bound = t.workerKeys[worker] {
                guard key == nil || bound == nil || bound == key else { return false }
                t.workerKeys.updateValue(bound ?? key, forKey: worker)
            } else {
                t.workerKeys.updateValue(key, forKey: worker)
            }
            return true
        }
    }

    public func coordinatorHeartbeat(_ id: String, host: String, endpoint: String?) throws(StoreError) {
        try transaction { $0.coordinators[id] = Tables.now }
    }

    public func coordinatorLeft(_ id: String) throws(StoreError) {
        try transaction { _ = $0.coordinators.removeValue(forKey: id) }
    }

    public func adoptOrphanedJobs(coordinator: String, silence: Double) throws(StoreError) -> [Adoption] {
        try transaction { t throws(StoreError) in
            let now = Tables.now
            var adopted: [Adoption] = []
            for job in t.jobs.values.sorted(by: { $0.created < $1.created }) {
                guard [.planning, .encoding, .stitching].contains(job.state), job.coordinator != coordinator, job.assignedCoordinator == nil,
                      job.coordinator.flatMap({ t.coordinators[$0] }).map({ $0 < now - silence }) ?? true else { continue }
                t.jobs[job.id]?.coordinator = coordinator
                switch job.state {
                case .planning: try t.move(job.id, to: .queued)
                case .stitching: try t.move(job.id, to: .encoding)
                default: t.notify(job.id)
                }
                for index in t.indices(job.id, in: [.leased]) {
                    try t.move(job.id, index, to: .pending) {
                        $0.leaseExpires = nil
                        $0.workerID = nil
                        $0.lastError = "its coordinator stopped answering"
                    }
                }
                t.log(.init(jobID: job.id, segmentIndex: nil, from: nil, to: "adopted",
                            detail: "coordinator \(coordinator) took the job over from \(job.coordinator ?? "none")"))
                adopted.append(Adoption(jobID: job.id, previous: job.coordinator, state: job.state))
            }
            return adopted
        }
    }

    public func jobsHeldElsewhere(_ jobs: [String], coordinator: String) throws(StoreError) -> [String] {
        try transaction { t in jobs.filter { id in t.jobs[id.lowercased()].map { $0.coordinator != coordinator } ?? false } }
    }

    public func holds(_ job: String, coordinator: String) throws(StoreError) -> Bool {
        try jobsHeldElsewhere([job], coordinator: coordinator).isEmpty
    }
}
