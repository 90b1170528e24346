import TesseraCore

/// What the coordinator decides, apart from what it does: the workers and their slots, the tasks in
/// flight, the jobs whose plans are loaded and their outstanding segments, whether the store may have
/// pending segments, and when each periodic duty is due. Events go in, actions come out; `Coordinator`
/// executes them against libzmq, the store and the result spooler. No I/O, and the clock is passed in
/// (seconds on any monotonic scale).
///
/// A job's life, each step with the event that takes it (store states in capitals, `JobState` holding the
/// transitions the store allows; `.ready`, `.stitched`… are what a job's thread reports, `Coordinator.Event`):
///
///     QUEUED ─ a sweep claims it: planningStarted ─▶ PLANNING ─ .ready: jobLoaded ─▶ ENCODING
///     ENCODING ─ recorded(its last segment) ─▶ the sweep's sweepAction:
///         .allocateSecondPass (pass .first) ─ allocated: .ready, jobLoaded(pass: .second) ─▶ ENCODING
///         .stitch ─▶ STITCHING ─ .stitched: jobDropped ─▶ DONE
///     ENCODING ─ jobStalled (a local fault) ─▶ stalled, nothing of it leased ─ jobResumed ─▶ ENCODING
///     STITCHING ─ .stalled (its output cannot be written) ─▶ ENCODING, stalled; stitched once resumed
///     any ─ .failed, out of attempts (reaped), input changed, fault too long: jobDropped ─▶ FAILED
///     any ─ sweepAction .forget (canceled, or ended by another) ─▶ forgotten here
///     any ─ sweepAction .lost, held elsewhere, or .released ─▶ let go, its spool kept for the other
///     another's, its coordinator silent past takeoverAfter ─ Duties.orphans: adopted ─▶ a sweep loads it
struct CoordinatorStateMachine {
    typealias SegmentRef = ClusterMessage.SegmentRef
    typealias LeaseRef = ClusterMessage.LeaseRef

    struct Configuration {
        var heartbeatInterval: Double = 1
        /// Heartbeats a worker may miss before it is dead.
        var liveness: Int = 3
        var leaseSeconds: Double = 600
        /// Payload bytes libzmq may hold for connected workers before no new task is packed.
        var sendWindowBytes: Int = 16 << 20
        /// Whether workers that skip the encode (benchmark mode) get work.
        var benchmark = false
        /// Slots a worker may ask for at most.
        var maximumSlots = 64
        /// A coordinator silent this long in the store loses its jobs to a live one.
        var takeoverAfter: Double = 15
        /// Whether this coordinator takes over silent coordinators' jobs (one for a single job does not).
        var adoptsOrphans = true
        /// Seconds after its submission past which a job leases before the jobs of its priority with less work left.
        var maxWait = LeaseOrder.defaultMaxWait

        /// Silence after which a worker is dead and its leases return.
        var silence: Double { heartbeatInterval * Double(liveness) }
    }

    struct Peer: Equatable {
        var slots: Int
        /// The public key it authenticated with (CURVE); nil on a plaintext transport.
        var key: String?
        /// Tasks sent to it, by segment, with each lease's token.
        var inFlight: [SegmentRef: String] = [:]
        var lastHeard: Double
        /// When its leases were last extended.
        var renewed = -Double.infinity
        /// Its headers differ from a job's (another libx264 build), or it skips the encode: no more work.
        var incompatible = false
        /// It answered a task busy (its slots are taken by another coordinator's tasks): nothing more is
        /// sent to it until the next heartbeat round.
        var paused = false

        var free: Int { incompatible || paused ? 0 : max(slots - inFlight.count, 0) }
    }

    struct Job: Equatable {
        /// The plan's segments.
        var segments: Set<Int>
        /// Segments not yet recorded done: when the last one is, the job is swept at once.
        var outstanding: Set<Int>
        /// A payload's average size, to lease no more than the send window takes.
        var payloadBytes: Int
        /// A local fault (its results cannot be spooled, its output cannot be written): nothing of it is
        /// leased until the fault clears.
        var stalled = false
        /// Which pass its segments encode: once all are done, a first pass of two allocates the second.
        var pass = Pass.only
        /// What the lease order ranks it by: its priority, when it was submitted, and each segment's work.
        var standing = Standing()

        /// Pixels left to encode: its outstanding segments, and a first pass's second pass.
        var remaining: Double {
            let outstandingWork = outstanding.reduce(0) { $0 + (standing.work[$1] ?? 0) }
            return outstandingWork + (pass == .first ? standing.work.values.reduce(0, +) : 0)
        }
    }

    /// A job's place in the lease order, as loaded (the store's priority and submission time, the plan's work).
    struct Standing: Equatable {
        var priority = 0
        /// When it was submitted, on the machine's clock (before it started: negative).
        var submitted = 0.0
        /// Pixels to encode in each segment (frames × output pixels).
        var work: [Int: Double] = [:]
    }

    enum Pass: Equatable {
        /// A one-pass job: stitched when its segments are done.
        case only
        /// A two-pass job's first pass: its bits are allocated when its segments are done.
        case first
        /// A two-pass job's second pass: stitched when its segments are done.
        case second
    }

    /// What the store may hold for the workers.
    enum Pending: Equatable {
        /// Something may have put a segment back: the next dispatch asks the store.
        case unknown
        /// The last lease statement found fewer than it asked for: dispatch asks nothing until an event
        /// that can put a segment back.
        case noneLeft
    }

    /// The message kinds a worker sends, and those only coordinators send (refused).
    enum MessageKind: Equatable {
        case ready, heartbeat, result, failure, bye, busy, progress, coordinatorOnly
    }

    enum DispatchAction: Equatable {
        case none
        /// Lease one segment per entry (worker ids, interleaved) from these jobs, filled in this order.
        case lease(slots: [String], jobs: [String])
    }

    enum LeaseAction: Equatable {
        /// Pack and send the segment's task to the worker, under the lease's token.
        case send(worker: String, SegmentRef, attempt: Int, token: String)
        /// Hand the lease back: its worker left, or the job is not loaded here.
        case handBack(worker: String, SegmentRef)
    }

    /// The periodic duties due at a tick, in the order the coordinator performs them.
    struct Duties: Equatable {
        /// Workers found silent: removed; the results they sent go to the store first, then their leases return.
        var silent: [String] = []
        /// Workers to send a heartbeat to.
        var heartbeat: [String] = []
        /// Look for expired leases; with `absentHolders`, also return leases of workers not connected.
        var reap: Bool = false
        var absentHolders: Bool = false
        /// Read the store's notifications (no round trip).
        var notifications: Bool = false
        /// Claim queued jobs, load encoding ones, stitch or forget finished ones.
        var sweep: Bool = false
        /// Lease work for free slots.
        var dispatch: Bool = false
        /// Record this coordinator's heartbeat in the store.
        var presence: Bool = false
        /// Look for jobs lost to another coordinator.
        var adopt: Bool = false
        /// With `adopt`, take over the jobs of coordinators silent longer than `takeoverAfter`: the store's
        /// session has lasted that long (after an outage every coordinator's heartbeat is stale).
        var orphans: Bool = false
        /// Look again at the stalled jobs' faults.
        var faults: Bool = false
    }

    let configuration: Configuration
    let started: Double
    private(set) var peers: [String: Peer] = [:]
    /// Workers whose messages are dropped (`quarantine`).
    private(set) var quarantined: Set<String> = []
    private(set) var jobs: [String: Job] = [:]
    /// Jobs being planned, loaded or stitched on a thread of their own.
    private(set) var busy: Set<String> = []
    /// The part of `busy` being planned.
    private(set) var planning: Set<String> = []
    /// Queued jobs may be waiting: the last sweep left them for later (`wantsJobs` was false).
    private(set) var queueWaiting = false
    private(set) var pending = Pending.unknown
    /// Something changed that a dispatch may act on.
    private(set) var dispatchDue = true
    /// A sweep is asked for (a notification, a job's last segment, a reconnect).
    private(set) var sweepAsked = false
    /// A job's last segment was recorded: the sweep is due at once.
    private(set) var finishedAsked = false
    /// Free slots waited on the send window at the last dispatch: look again soon, not on the next message.
    private(set) var windowFull = false
    private var nextBeat: Double, nextSweep: Double, nextReap: Double, nextNotifications: Double
    private var nextPresence: Double, nextAdoption: Double, nextFaults: Double
    private var lastSweep = -Double.infinity
    /// The time of the last tick: the lease order's clock.
    private var clock: Double
    /// When the store's current session began (its connection was last made again).
    private var storeSessionStarted: Double
    /// When the inbox was last read to the end (`inboxRead`); infinity when never told: then `now`.
    private var inboxReadAt = Double.infinity
    /// Jobs that ended here: answers to their tasks that cross the cancel are dropped, not refused.
    private var endedJobs = EndedJobs()

    init(_ configuration: Configuration, now: Double) {
        self.configuration = configuration
        started = now
        nextBeat = now
        nextSweep = now
        nextReap = now
        nextNotifications = now
        nextPresence = now
        // Its own heartbeat is recorded first: a coordinator that starts adopts nothing before a look at
        // the others has had time to be fair to them.
        nextAdoption = now + min(2, configuration.takeoverAfter / 4)
        nextFaults = now
        storeSessionStarted = now
        clock = now
    }

    /// How long the loop may wait for a message before a duty is due.
    var receiveTimeout: Double { windowFull ? 0.002 : 0.02 }

    // MARK: Workers

    /// Any well-formed message from `worker`. True when the results already received must be recorded
    /// first: every message but a heartbeat or a result may hand a lease back.
    mutating func received(_ kind: MessageKind, from worker: String, now: Double) -> Bool {
        peers[worker]?.lastHeard = now
        dispatchDue = true
        switch kind {
        case .heartbeat, .result, .progress: return false
        default:
            pending = .unknown
            return true
        }
    }

    /// A worker (re)joined with `slots`, authenticated with `key` (nil: plaintext), and reports working on
    /// `working`. Its record replaces any the same id had (the worker reconnected); the
    /// leases in its name it is not working on go back (`leasesKept` follows with the rest). Returns the
    /// leases it may keep, by segment, with their tokens.
    mutating func workerReady(_ worker: String, slots: Int, skipsEncode: Bool, key: String? = nil, working: [LeaseRef],
                              now: Double) -> [SegmentRef: String] {
        var peer = Peer(slots: min(max(slots, 1), configuration.maximumSlots), key: key, lastHeard: now)
        peer.incompatible = skipsEncode && !configuration.benchmark
        peers[worker] = peer
        pending = .unknown
        dispatchDue = true
        return Dictionary(working.map { ($0.segment, $0.token) }, uniquingKeysWith: { first, _ in first })
    }

    /// The leases in `worker`'s name it is still working on, with their tokens.
    mutating func leasesKept(_ worker: String, _ kept: [SegmentRef: String]) {
        peers[worker]?.inFlight = kept
    }

    /// The leases the store holds in a worker's name, against those it reports `working` on: it keeps those
    /// it works on under that lease's token; the others go back, without an attempt counted.
    struct LeaseSort: Equatable {
        var kept: [SegmentRef: String] = [:]
        var handBack: [SegmentRef] = []

        init(stored: [LeaseRef], working: [SegmentRef: String]) {
            for lease in stored {
                if working[lease.segment] == lease.token { kept[lease.segment] = lease.token } else { handBack.append(lease.segment) }
            }
        }
    }

    /// The store's leases in the name of `worker`, which just (re)joined working on `working`: those it
    /// keeps are its tasks in flight; returns those the coordinator hands back.
    mutating func storeLeasesFound(_ worker: String, _ stored: [LeaseRef], working: [SegmentRef: String]) -> [SegmentRef] {
        let sort = LeaseSort(stored: stored, working: working)
        leasesKept(worker, sort.kept)
        return sort.handBack
    }

    /// Why a result or failure was refused before anything was written.
    enum Refusal: Equatable, CustomStringConvertible {
        /// Not from a connected worker (never joined, went silent, left, or its key was revoked).
        case unknownWorker
        /// This worker holds no task for the segment (a duplicate, or a late result of a lease that ended).
        case noTask
        /// Its token is not the lease's (a result of an earlier lease, or a forgery).
        case wrongToken
        /// With CURVE: it came with no key, or one not authorized (now).
        case unauthorizedKey
        /// With CURVE: its key is not the one its worker joined with.
        case keyChanged
        /// Its job ended here (canceled, done or failed) after the task was sent: a late answer, dropped quietly.
        case jobEnded

        var description: String {
            switch self {
            case .unknownWorker: "not from a connected worker"
            case .noTask: "the worker holds no lease on this segment (a duplicate or a late result)"
            case .wrongToken: "its lease token is not the lease's (a result of an earlier lease, or forged)"
            case .unauthorizedKey: "its key is not authorized"
            case .keyChanged: "its key is not the one its worker joined with"
            case .jobEnded: "its job has ended"
            }
        }
    }

    /// A result or a failure under `lease` from `worker`: accepted only for a task in flight to that
    /// worker under that token, which then ends (its slot is free); nil when accepted.
    mutating func answerArrived(_ lease: LeaseRef, from worker: String) -> Refusal? {
        guard let peer = peers[worker] else { return .unknownWorker }
        guard let token = peer.inFlight[lease.segment] else { return endedJobs.contains(lease.segment.jobID) ? .jobEnded : .noTask }
        guard token == lease.token else { return .wrongToken }
        taskEnded(lease.segment, worker: worker)
        return nil
    }

    /// The authorized keys changed: workers whose key is no longer among `allowed` are forgotten at once
    /// (the coordinator returns their leases). Returns them.
    /// A worker refused too often: forgotten, and its messages dropped from now on.
    mutating func quarantine(_ worker: String) {
        workerLeft(worker)
        quarantined.insert(worker)
    }

    /// Its quarantine was lifted: its messages are taken again (it joins anew once it reconnects).
    mutating func unquarantine(_ worker: String) {
        quarantined.remove(worker)
    }

    mutating func keysChanged(allowed: Set<String>) -> [String] {
        let revoked = peers.filter { $0.value.key.map { !allowed.contains($0) } ?? false }.keys.sorted()
        for id in revoked { workerLeft(id) }
        return revoked
    }

    /// A heartbeat from a worker: true when its leases are to be extended now (a quarter lease at a
    /// time, and only while it holds some).
    func renewalDue(_ worker: String, now: Double) -> Bool {
        guard let peer = peers[worker], !peer.inFlight.isEmpty else { return false }
        return now - peer.renewed >= configuration.leaseSeconds / 4
    }

    mutating func leasesRenewed(_ worker: String, now: Double) {
        peers[worker]?.renewed = now
    }

    /// A result or a failure for `segment` (see `answerArrived`): the slot is free. Another worker's task
    /// for the same segment is left alone.
    mutating func taskEnded(_ segment: SegmentRef, worker: String) {
        peers[worker]?.inFlight[segment] = nil
        dispatchDue = true
    }

    /// A worker said goodbye: forgotten; the coordinator hands its leases back.
    mutating func workerLeft(_ worker: String) {
        peers[worker] = nil
        pending = .unknown
        dispatchDue = true
    }

    /// The result spooler recorded a segment done.
    mutating func recorded(_ segment: SegmentRef) {
        guard var job = jobs[segment.jobID], job.outstanding.remove(segment.index) != nil else { return }
        jobs[segment.jobID] = job
        // Its last one: the sweep that stitches it comes at once, not after the 50 ms between sweeps.
        if job.outstanding.isEmpty { sweepAsked = true; finishedAsked = true }
    }

    /// A segment recorded done is encoded again (an audit found its result wrong): it is outstanding again.
    mutating func reopened(_ segment: SegmentRef) {
        guard jobs[segment.jobID]?.segments.contains(segment.index) == true else { return }
        jobs[segment.jobID]?.outstanding.insert(segment.index)
        pending = .unknown
        dispatchDue = true
    }

    /// An audit closed or waits for a worker: the sweep looks at its job (it may be stitched now), and a dispatch
    /// may send the audit task.
    mutating func auditSettled() {
        sweepAsked = true
        finishedAsked = true
        dispatchDue = true
    }

    /// The result spooler refused a worker's result because its headers differ from the job's.
    mutating func incompatible(_ worker: String) {
        peers[worker]?.incompatible = true
        pending = .unknown
    }

    /// A worker answered a task busy (it serves other coordinators too): its lease went back, and the
    /// worker gets nothing more until the next heartbeat round.
    mutating func busyReply(_ worker: String) {
        peers[worker]?.paused = true
        handedBack()
    }

    /// A result was refused and its lease went back.
    mutating func handedBack() {
        pending = .unknown
        dispatchDue = true
    }

    /// The store's connection was made again (its server may have forgotten our last commits): each
    /// connected worker's leases that it is not working on go back, and what was notified meanwhile is
    /// lost, so a sweep follows. Returns each worker's tasks in flight, with their tokens.
    mutating func storeReconnected(now: Double) -> [String: [SegmentRef: String]] {
        storeSessionStarted = now
        pending = .unknown
        sweepAsked = true
        dispatchDue = true
        return peers.mapValues(\.inFlight)
    }

    func isConnected(_ worker: String) -> Bool { peers[worker] != nil }

    // MARK: Jobs

    /// A thread of its own starts planning, loading or stitching `job`.
    mutating func backgroundStarted(_ job: String) {
        busy.insert(job)
    }

    /// A queued job was claimed and is being planned on a thread of its own.
    mutating func planningStarted(_ job: String) {
        busy.insert(job)
        planning.insert(job)
    }

    /// Whether to plan another queued job: the segments not yet leased, with one at least for each job
    /// being planned, no longer fill the workers' slots. Jobs are planned as their work is about to be
    /// leased, not when submitted, so each is cut for the load it meets (`SegmentationRule`).
    var wantsJobs: Bool {
        let slots = peers.values.reduce(0) { $0 + ($1.incompatible ? 0 : $1.slots) }
        let inFlight = peers.values.reduce(0) { $0 + $1.inFlight.keys.filter { jobs[$0.jobID] != nil }.count }
        let outstanding = jobs.values.reduce(0) { $0 + ($1.stalled ? 0 : $1.outstanding.count) }
        return max(0, outstanding - inFlight) + planning.count < max(1, slots)
    }

    /// A sweep claimed what it would: with `leftWaiting`, queued jobs may remain for when `wantsJobs`.
    mutating func claimed(leftWaiting: Bool) {
        queueWaiting = leftWaiting
    }

    /// That thread reported back (ready, failed, stitched or released).
    mutating func backgroundEnded(_ job: String) {
        planning.remove(job)
        busy.remove(job)
        pending = .unknown
        dispatchDue = true
    }

    /// A job's plan is loaded: its segments may be leased.
    mutating func jobLoaded(_ job: String, segments: Set<Int>, outstanding: Set<Int>, payloadBytes: Int, pass: Pass = .only,
                            standing: Standing = Standing()) {
        jobs[job] = Job(segments: segments, outstanding: outstanding, payloadBytes: max(payloadBytes, 1), pass: pass, standing: standing)
        pending = .unknown
        dispatchDue = true
    }

    /// Whether an encoding job in the store needs loading here.
    func needsLoading(_ job: String) -> Bool { jobs[job] == nil && !busy.contains(job) }

    /// Whether a loaded job whose segments are all done may be stitched now.
    func mayStitch(_ job: String) -> Bool { jobs[job] != nil && !busy.contains(job) }

    /// The encoders a new plan may count on: one for each connected worker.
    var encoders: Int { peers.count }

    /// The store's connection has something to read: its notifications are read on this turn.
    mutating func storeSpoke(now: Double) {
        nextNotifications = min(nextNotifications, now)
    }

    /// Whether a notified change to `job` calls for a sweep: a job of ours that is still encoding
    /// notifies for every segment it records, which needs none (its last one asks, see `recorded`).
    mutating func notified(_ job: String, state: JobState?) {
        if jobs[job] == nil || state != .encoding { sweepAsked = true }
    }

    /// A job ended or moved on: forgotten. Returns the workers to tell to cancel it; their slots are free.
    mutating func jobDropped(_ job: String) -> [String] {
        jobs[job] = nil
        endedJobs.insert(job)
        var cancel: [String] = []
        for (id, peer) in peers where peer.inFlight.keys.contains(where: { $0.jobID == job }) {
            cancel.append(id)
            peers[id]?.inFlight = peer.inFlight.filter { $0.key.jobID != job }
        }
        pending = .unknown
        dispatchDue = true
        return cancel.sorted()
    }

    /// Another coordinator has the job: let go of it without cancelling anything.
    mutating func jobReleased(_ job: String) {
        jobs[job] = nil
    }

    /// Jobs were adopted from a silent coordinator: a sweep loads them.
    mutating func adopted() {
        sweepAsked = true
        pending = .unknown
        dispatchDue = true
    }

    /// What a local fault did to a job.
    enum Stall: Equatable {
        /// It is not loaded here: there is nothing to stop.
        case notLoaded
        /// It stops now (news to log).
        case stalled
        /// It was stopped already.
        case stillStalled
    }

    /// A local fault stops the job: none of it is leased until `jobResumed`.
    mutating func jobStalled(_ job: String) -> Stall {
        guard let stalled = jobs[job]?.stalled else { return .notLoaded }
        jobs[job]?.stalled = true
        return stalled ? .stillStalled : .stalled
    }

    mutating func jobResumed(_ job: String) {
        guard jobs[job]?.stalled == true else { return }
        jobs[job]?.stalled = false
        pending = .unknown
        dispatchDue = true
    }

    /// The loaded jobs a fault stops.
    var stalledJobs: [String] { jobs.filter(\.value.stalled).keys.sorted() }

    /// Expired leases came back, and the jobs out of attempts failed (dropped by the caller).
    mutating func reaped() {
        pending = .unknown
        dispatchDue = true
    }

    // MARK: Time

    /// Every waiting message was read at `now`: a worker is silent only as far as the inbox was read, so a
    /// loop held up by slow bookkeeping does not take the heartbeats still waiting in it for silence.
    mutating func inboxRead(now: Double) {
        inboxReadAt = now
    }

    /// The duties due at `now`. Silent workers are forgotten here.
    mutating func tick(now: Double) -> Duties {
        var duties = Duties()
        clock = max(clock, now)
        // Silence is judged on every turn, as far as the inbox was read, not only when heartbeats are due.
        let listened = min(now, inboxReadAt)
        for id in peers.filter({ listened - $0.value.lastHeard > configuration.silence }).keys.sorted() {
            peers[id] = nil
            duties.silent.append(id)
            pending = .unknown
            dispatchDue = true
        }
        if now >= nextBeat {
            nextBeat = now + configuration.heartbeatInterval
            for (id, peer) in peers.sorted(by: { $0.key < $1.key }) {
                if peer.paused {
                    peers[id]?.paused = false
                    dispatchDue = true
                }
                duties.heartbeat.append(id)
            }
            // Expired leases (a lease lasts minutes) are looked for every few seconds; leases of
            // workers that never came back after a restart once they have had time to.
            if now >= nextReap {
                duties.reap = true
                duties.absentHolders = now - started > configuration.silence + 35
                nextReap = now + min(5, configuration.leaseSeconds / 4)
            }
        }
        if now >= nextNotifications {
            nextNotifications = now + 0.01
            duties.notifications = true
        }
        if now >= nextPresence {
            nextPresence = now + configuration.heartbeatInterval
            duties.presence = true
        }
        if now >= nextAdoption {
            nextAdoption = now + min(2, configuration.takeoverAfter / 4)
            duties.adopt = true
            duties.orphans = configuration.adoptsOrphans && now - storeSessionStarted >= configuration.takeoverAfter
        }
        if now >= nextFaults, !stalledJobs.isEmpty {
            nextFaults = now + 2
            duties.faults = true
        }
        return duties
    }

    /// Whether a sweep is due after the notifications were read: at most every 50 ms when asked for (or
    /// when queued jobs wait and planned work runs short), at once when asked while this coordinator has
    /// no job at all (the first job queued to an idle coordinator is claimed without waiting), otherwise
    /// every 5 s as a safety net.
    mutating func sweepDue(now: Double) -> Bool {
        let asked = sweepAsked || (queueWaiting && wantsJobs)
        let idle = jobs.isEmpty && busy.isEmpty
        guard now >= nextSweep || finishedAsked || (asked && (idle || now - lastSweep >= 0.05)) else { return false }
        sweepAsked = false
        finishedAsked = false
        lastSweep = now
        nextSweep = now + 5
        pending = .unknown
        dispatchDue = true
        return true
    }

    // MARK: Dispatch

    /// What to lease for the free slots, with `heldBytes` payload bytes still held by libzmq for the
    /// connected workers. One statement for every free slot; the slots interleave the workers so that
    /// a short queue is shared among them, and stop at what the send window takes. The jobs come in the
    /// lease order (`leaseOrder`): the statement fills the first one's pending segments before the next.
    mutating func dispatch(heldBytes: Int) -> DispatchAction {
        guard dispatchDue else { return .none }
        dispatchDue = false
        windowFull = false
        guard !jobs.isEmpty else { return .none }
        var free = peers.filter { $0.value.free > 0 }.map { (id: $0.key, free: $0.value.free) }.sorted { $0.id < $1.id }
        var slots: [String] = []
        while !free.isEmpty {
            for n in free.indices { slots.append(free[n].id); free[n].free -= 1 }
            free.removeAll { $0.free == 0 }
        }
        guard !slots.isEmpty, pending == .unknown else { return .none }
        let payload = jobs.values.map(\.payloadBytes).max() ?? 1
        let window = configuration.sendWindowBytes
        let fitting = heldBytes >= window ? 0 : max(1, (window - heldBytes) / payload)
        if slots.count > fitting {
            slots.removeLast(slots.count - fitting)
            windowFull = true
            dispatchDue = true
            guard !slots.isEmpty else { return .none }
        }
        let open = leaseOrder.filter { jobs[$0]?.stalled == false }
        guard !open.isEmpty else { return .none }
        return .lease(slots: slots, jobs: open)
    }

    /// The loaded jobs in the order their segments are leased (`LeaseOrder`), at the last tick's time.
    var leaseOrder: [String] {
        LeaseOrder(maxWait: configuration.maxWait).ranked(jobs.mapValues {
            LeaseOrder.Standing(priority: $0.standing.priority, submitted: $0.standing.submitted, remaining: $0.remaining)
        }, now: clock)
    }

    /// What the lease statement returned for `asked` slots: each lease is sent, or handed back when its
    /// worker left or its job is not loaded here. Fewer than asked means none are left.
    mutating func leased(_ leases: [(worker: String, segment: SegmentRef, attempts: Int, token: String)], asked: Int) -> [LeaseAction] {
        pending = leases.count < asked ? .noneLeft : .unknown
        var actions: [LeaseAction] = []
        for lease in leases {
            if peers[lease.worker] != nil, jobs[lease.segment.jobID]?.segments.contains(lease.segment.index) == true {
                actions.append(.send(worker: lease.worker, lease.segment, attempt: lease.attempts + 1, token: lease.token))
            } else {
                pending = .unknown
                actions.append(.handBack(worker: lease.worker, lease.segment))
            }
        }
        return actions
    }

    /// A task went out under the lease's token.
    mutating func sent(_ segment: SegmentRef, to worker: String, token: String) {
        peers[worker]?.inFlight[segment] = token
    }

    /// A task could not be packed or sent: its lease went back.
    mutating func notSent() {
        pending = .unknown
    }
}

extension ClusterMessage {
    /// The kind the state machine tells messages apart by.
    var kind: CoordinatorStateMachine.MessageKind {
        switch self {
        case .ready: .ready
        case .heartbeat: .heartbeat
        case .result: .result
        case .failure: .failure
        case .bye: .bye
        case .busy: .busy
        case .progress: .progress
        case .task, .cancel, .refused: .coordinatorOnly
        }
    }
}
