import Foundation
import TesseraCore

// In TesseraStore rather than TesseraCluster: `JobStore` conforms where it is declared, and another store needs only
// this module's records and errors, not the coordinator.

/// The store as a coordinator uses it: exactly the calls its loop, its job threads (planning, bit allocation,
/// stitching) and its result spooler make. `JobStore` is the PostgreSQL one. A session is used by one thread at a
/// time, as a `JobStore` is; each thread opens its own through `CoordinatorStoreSessions`.
///
/// Notifications: a session that `listen()`s is told of every change of a job (its id and state) through
/// `waitForJobChanges`. `changesDescriptor` is a descriptor that turns readable when changes wait, which the loop
/// polls beside its socket; a store without one (nil) is read at the loop's tick, when `hasChanges` says so.
public protocol CoordinatorStore: AnyObject {
    // MARK: Session

    /// Seconds spent waiting on the store, for the coordinator's phase timings.
    var queryTime: Double { get }
    /// Sessions opened so far: it changes when the connection was lost and made again.
    var sessions: Int { get }
    var isConnected: Bool { get }
    func close()
    /// Commits that need not wait for durable storage (see `JobStore.commitWithoutWaitingForFlush`).
    func commitWithoutWaitingForFlush() throws(StoreError)
    /// Statements planned once (see `JobStore.planStatementsOnce`).
    func planStatementsOnce() throws(StoreError)

    // MARK: Notifications

    /// Subscribes this session to job changes.
    func listen() throws(StoreError)
    /// Readable while job changes wait to be read; nil when the store has no such descriptor.
    var changesDescriptor: Int32? { get }
    /// Job changes already received and not yet read.
    var hasChanges: Bool { get }
    /// Waits up to `timeout` for job changes; returns each changed job with the state it was in.
    func waitForJobChanges(timeout: TimeInterval) throws(StoreError) -> [(id: String, state: JobState?)]

    // MARK: Jobs

    func job(_ idOrPrefix: String) throws(StoreError) -> JobRecord
    func jobIDs(in state: JobState, coordinator: String?) throws(StoreError) -> [String]
    func setState(_ id: String, to state: JobState, error: String?) throws(StoreError)
    func claimQueuedJob(coordinator: String, only job: String?, outranking: Bool) throws(StoreError) -> JobRecord?
    func queuedJobs(coordinator: String) throws(StoreError) -> [QueuedJob]
    func claimQueuedJob(coordinator: String, ranked: [String], outranking: Bool) throws(StoreError) -> JobRecord?
    @discardableResult
    func addSegments(_ jobID: String, _ segments: [PlannedSegment], framePixels: Int?, outputs: Int) throws(StoreError) -> Bool
    func load(coordinator: String, priority: Int) throws(StoreError) -> ClusterLoad
    func pinInput(_ job: String, identity json: String) throws(StoreError) -> String
    func referenceExtradata(_ jobID: String, proposing hex: String) throws(StoreError) -> String
    func secondPass(_ jobID: String) throws(StoreError) -> [Int: [PassInput]]?
    func startSecondPass(_ jobID: String, coordinator: String, _ passes: [Int: [PassInput]]) throws(StoreError) -> Bool
    func recordProgress(_ job: String, framesEncoding: Int, fps: Double?, speed: Double?) throws(StoreError)
    @discardableResult
    func setStalled(_ job: String, reason: String?) throws(StoreError) -> Double

    // MARK: Segments and leases

    func plannedSegments(_ jobID: String) throws(StoreError) -> [PlannedSegment]
    func segments(_ jobID: String) throws(StoreError) -> [SegmentRecord]
    func redo(_ jobID: String, _ index: Int, reason: String, countingAttempt: Bool) throws(StoreError)
    func lease(slots: [String], seconds: Double, jobs: [String]?, attemptLimit: Int,
               coordinator: String?) throws(StoreError) -> [(worker: String, lease: Lease)]
    func lease(slots: [String], seconds: Double, ranked: [String], attemptLimit: Int,
               coordinator: String?) throws(StoreError) -> [(worker: String, lease: Lease)]
    func leases(worker: String, coordinator: String?) throws(StoreError) -> [Lease]
    func leaseHolders(coordinator: String?) throws(StoreError) -> [String]
    func renewAll(worker: String, seconds: Double, coordinator: String?) throws(StoreError)
    @discardableResult
    func release(_ jobID: String, _ index: Int, worker: String, token: String?, error: String?) throws(StoreError) -> Bool
    @discardableResult
    func releaseAll(worker: String, reason: String, countAttempt: Bool, coordinator: String?) throws(StoreError) -> Int
    func reapExpiredLeases(attemptLimit: Int) throws(StoreError) -> (returned: [Lease], failedJobs: [String])
    func complete(_ completions: [JobStore.Completion]) throws(StoreError) -> Set<Int>
    func recordRefusal(_ jobID: String, _ index: Int, worker: String, reason: String) throws(StoreError)
    /// Adds an event of `kind` to the job's events (what planning decided that the user should read).
    func recordNote(_ jobID: String, kind: String, detail: String) throws(StoreError)

    // MARK: Workers and coordinators

    @discardableResult
    func heartbeat(worker: String, host: String, capabilities: [String: String], key: String?) throws(StoreError) -> Bool
    func coordinatorHeartbeat(_ id: String, host: String, endpoint: String?) throws(StoreError)
    func coordinatorLeft(_ id: String) throws(StoreError)
    func adoptOrphanedJobs(coordinator: String, silence: Double) throws(StoreError) -> [Adoption]
    func jobsHeldElsewhere(_ jobs: [String], coordinator: String) throws(StoreError) -> [String]
    func holds(_ job: String, coordinator: String) throws(StoreError) -> Bool

    // MARK: Audits (`JobStore+Audits`)

    func auditRecord(_ identity: String) throws(StoreError) -> WorkerAudit?
    func recordJobAudit(_ jobID: String, _ audit: JobAudit) throws(StoreError)
    func recordAudit(_ identity: String, worker: String, matched: Bool) throws(StoreError)
    func quarantine(_ identity: String, worker: String, reason: String) throws(StoreError)
    /// The keys quarantined now.
    func quarantinedIdentities() throws(StoreError) -> Set<String>
}

/// The defaults `JobStore` gives these arguments (a protocol requirement has none).
extension CoordinatorStore {
    public func setState(_ id: String, to state: JobState) throws(StoreError) { try setState(id, to: state, error: nil) }

    /// A segment recorded done is encoded again, without counting an attempt.
    public func redo(_ jobID: String, _ index: Int, reason: String) throws(StoreError) {
        try redo(jobID, index, reason: reason, countingAttempt: false)
    }

    @discardableResult
    public func release(_ jobID: String, _ index: Int, worker: String, error: String?) throws(StoreError) -> Bool {
        try release(jobID, index, worker: worker, token: nil, error: error)
    }

    @discardableResult
    public func releaseAll(worker: String, reason: String, coordinator: String?) throws(StoreError) -> Int {
        try releaseAll(worker: worker, reason: reason, countAttempt: true, coordinator: coordinator)
    }
}

extension JobStore: CoordinatorStore {}

/// Opens a coordinator's store sessions: the loop's, the result spooler's, and one for each job thread.
public struct CoordinatorStoreSessions: Sendable {
    /// A new session; `migrate` brings the schema up to date first, `patience` says how an unreachable store is
    /// waited out.
    public var open: @Sendable (_ migrate: Bool, _ patience: StorePatience) throws(StoreError) -> any CoordinatorStore

    public init(open: @escaping @Sendable (_ migrate: Bool, _ patience: StorePatience) throws(StoreError) -> any CoordinatorStore) {
        self.open = open
    }

    /// PostgreSQL at `url` (a libpq URI or key=value string): a connection for each session.
    public static func postgres(url: String) -> CoordinatorStoreSessions {
        CoordinatorStoreSessions { migrate, patience throws(StoreError) in try JobStore.connect(url: url, migrate: migrate, patience: patience) }
    }
}

extension CoordinatorStore {
    /// A single output's plan: its progress counts its frames once.
    @discardableResult
    public func addSegments(_ jobID: String, _ segments: [PlannedSegment], framePixels: Int?) throws(StoreError) -> Bool {
        try addSegments(jobID, segments, framePixels: framePixels, outputs: 1)
    }
}
