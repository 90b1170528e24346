import Foundation
import Logging
import TesseraCore
import TesseraEngine
import TesseraStore
import ZMQKit

/// The coordinator's loop: receives, leases and sends on one thread, doing what
/// `CoordinatorStateMachine` decides against libzmq, the store and the result spooler. Confined to the
/// thread that calls `run`.
final class CoordinatorLoop {
    typealias SegmentRef = ClusterMessage.SegmentRef
    typealias LeaseRef = ClusterMessage.LeaseRef

    /// A job whose plan is loaded: what packing its payloads needs.
    struct LoadedJob {
        var plan: JobPlan
        var reader: SegmentReader
        var segments: [Int: PlannedSegment]
    }

    let coordinator: Coordinator
    let store: any CoordinatorStore
    let socket: ZMQSocket
    let spooler: ResultSpooler
    var machine: CoordinatorStateMachine
    var loaded: [String: LoadedJob] = [:]
    /// Payload bytes libzmq holds for each connected worker (kept over a reconnect: the old connection
    /// may still be sending).
    var held: [String: HeldBytes] = [:]
    /// When the first task went out.
    var firstTaskSent: Double?
    /// The worker keys this coordinator accepts (CURVE), and the generation of them the workers were
    /// last checked against; nil on a plaintext transport.
    let authorized: AuthorizedKeys?
    var keysChecked = 0
    /// Keys whose dropped messages were logged (once each).
    var droppedKeysLogged: Set<String> = []
    /// Refused messages, counted (`refuse`).
    var refusals = RefusalLedger()
    /// When each worker was last told of each refusal (`tell`).
    var toldRefusals: [String: Double] = [:]
    /// The local faults that stall jobs, by job.
    var faults: [String: LocalFault] = [:]
    /// Frames encoded between segment completions, and the rate, by job.
    var meter = ProgressMeter()
    /// Audit by re-encoding (`CoordinatorLoop+Audit`): the open audits, each job's rate (nil: the coordinator's),
    /// each worker's encoder profile, and the quarantined workers' keys.
    var audits: AuditBook
    var auditRates: [String: Double] = [:]
    var profiles: [String: String] = [:]
    var quarantinedKeys: [String: String] = [:]
    /// Workers that read a task's source bytes from object storage themselves, with the `SourceRanges` version
    /// each reads (`SourceRanges.capability`).
    var sourceReaders: [String: Int] = [:]
    /// Inputs checked off the loop (a HEAD request for an object), and the failures held for their answer:
    /// a worker that could not read its bytes is answered once the coordinator knows whether the object changed.
    let inputChecks: InputChecks
    var unreadable: [String: [(failure: ClusterMessage.Failure, worker: String)]] = [:]

    var options: Coordinator.Options { coordinator.options }
    var logger: Logger { coordinator.logger }

    init(_ coordinator: Coordinator, store: any CoordinatorStore, socket: ZMQSocket, spooler: ResultSpooler, authorized: AuthorizedKeys?) {
        self.coordinator = coordinator
        self.store = store
        self.socket = socket
        self.spooler = spooler
        self.authorized = authorized
        inputChecks = InputChecks(doorbell: coordinator.events.doorbell)
        keysChecked = authorized?.generation ?? 0
        machine = CoordinatorStateMachine(coordinator.machineConfiguration, now: Stopwatch.now)
        audits = AuditBook(.init(rate: coordinator.options.auditRate, wait: coordinator.options.auditWait))
    }

    func run(until stop: CancellationFlag) throws {
        var sessions = store.sessions
        // A stop wakes the loop from its wait on the workers' socket.
        let observer = stop.onCancel { [weak doorbell = coordinator.events.doorbell] in doorbell?.ring() }
        defer { stop.stopObserving(observer) }
        while !stop.isCancelled {
            // Every waiting message first, so heartbeats are never read late.
            let doorbell = coordinator.events.doorbell
            // The store's socket wakes the wait too: a job submitted is claimed at once, not a turn later.
            // Changes a query's answer brought in are read without waiting.
            let storeSocket = store.changesDescriptor
            var storeSpoke = store.hasChanges
            var timeout = storeSpoke ? 0 : machine.receiveTimeout
            let wake = [doorbell.isValid ? doorbell.fd : nil, storeSocket].compactMap { $0 }
            while let frames = try socket.receiveFrames(timeout: timeout, wake: wake, woken: { storeSpoke = storeSpoke || $0 == storeSocket }) {
                timeout = 0
                try step("message", \.results) { try handle(frames) }
            }
            machine.inboxRead(now: Stopwatch.now)
            if storeSpoke { machine.storeSpoke(now: Stopwatch.now) }
            doorbell.answer()
            try step("results", \.results) { try takeOutcomes() }
            if store.sessions != sessions {
                sessions = store.sessions
                logger.info("the job store is reachable again")
                try step("reconnect", \.bookkeeping) { try reconcile(machine.storeReconnected(now: Stopwatch.now)) }
            }
            try step("refusals", \.bookkeeping) { try recordDueRefusals() }
            if !audits.open.isEmpty { try step("audits", \.bookkeeping) { try tendAudits(now: Stopwatch.now) } }
            if let authorized, authorized.generation != keysChecked {
                keysChecked = authorized.generation
                try step("keys", \.bookkeeping) { try revoke(machine.keysChanged(allowed: authorized.keys)) }
            }
            for event in coordinator.events.take() {
                try step("job event", \.bookkeeping) { try apply(event) }
            }
            for outcome in inputChecks.take() {
                try step("input check", \.bookkeeping) { try checked(outcome) }
            }
            let now = Stopwatch.now
            let duties = machine.tick(now: now)
            CoordinatorMetrics.workers(machine.peers.count)
            if !duties.silent.isEmpty || !duties.heartbeat.isEmpty || duties.reap {
                try step("heartbeat", \.bookkeeping) { try perform(duties) }
            }
            if duties.presence || duties.adopt || duties.faults {
                try step("failover", \.bookkeeping) { try performFailover(duties) }
            }
            // A look at what the store has sent (no round trip): a processor cost, bookkeeping's.
            if duties.notifications {
                let cpu = Stopwatch.threadCPU
                for change in try store.waitForJobChanges(timeout: 0) { machine.notified(change.id, state: change.state) }
                let used = Stopwatch.threadCPU - cpu
                coordinator.phaseTimings.withValue { $0.bookkeeping += used }
            }
            if machine.sweepDue(now: now) {
                try step("sweep", \.bookkeeping) { try sweep() }
            }
            if machine.dispatchDue {
                try step("dispatch", \.dispatch) { try dispatch() }
            }
        }
    }

    /// Runs one part of the loop: what goes wrong because of one message or one job is logged and
    /// dropped; only a database that stays unreachable ends the coordinator. Its processor time goes to
    /// `phase` (see `PhaseTimings`), its waits on the store to `database`.
    func step(_ what: String, _ phase: WritableKeyPath<PhaseTimings, Double>, _ body: () throws -> Void) throws {
        let started = Stopwatch.threadCPU, waited = store.queryTime
        defer {
            let database = store.queryTime - waited, cpu = Stopwatch.threadCPU - started
            coordinator.phaseTimings.withValue {
                $0.database += database
                $0.loopDatabase += database
                $0[keyPath: phase] += cpu
            }
        }
        do {
            try body()
        } catch let error as StoreError where error.isConnectionFailure {
            throw error
        } catch {
            logger.warning("\(what) failed", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Workers

    func handle(_ frames: [ReceivedFrame]) throws {
        let now = Stopwatch.now
        guard frames.count >= 2, case let (worker, message)? = try admit(frames, now: now) else { return }
        let key = frames[1].userID
        switch message {
        case .ready(let ready):
            // With CURVE, an id belongs to the first key it joined with.
            guard try store.heartbeat(worker: worker, host: ready.host, capabilities: ready.capabilities, key: key) else {
                logger.warning("refused a worker whose id belongs to another key", metadata: ["worker.id": "\(worker)", "worker.key": "\(key ?? "none")"])
                tell(worker, .idBoundToAnotherKey, now: now)
                return
            }
            guard try admitAudited(worker, key: key, capabilities: ready.capabilities, now: now) else { return }
            let skipsEncode = ready.capabilities[BenchResult.capability] != nil
            let working = machine.workerReady(worker, slots: ready.slots, skipsEncode: skipsEncode, key: key, working: ready.inFlight, now: now)
            if skipsEncode, !options.benchmark {
                logger.warning("a benchmark worker (no encoding) gets no work", metadata: ["worker.id": "\(worker)"])
            }
            if held[worker] == nil { held[worker] = HeldBytes() }
            sourceReaders[worker] = SourceRanges.version(in: ready.capabilities)
            // Leases in its name that it is not working on (results lost while we were apart) go back.
            try handBack(machine.storeLeasesFound(worker, storedLeases(of: worker), working: working), of: worker)
            logger.info("worker joined", metadata: ["worker.id": "\(worker)", "worker.slots": "\(ready.slots)"])
        case .heartbeat:
            if machine.renewalDue(worker, now: now) {
                try store.renewAll(worker: worker, seconds: options.leaseSeconds, coordinator: options.coordinatorID)
                machine.leasesRenewed(worker, now: now)
            }
        case .result(let header, _):
            // Refused before a byte is written: only a task in flight to this worker, under its lease's token.
            if let refusal = machine.answerArrived(LeaseRef(segment: header.segment, token: header.token), from: worker) {
                CoordinatorMetrics.resultRefused(refusal)
                return try refuse(header.segment, from: worker, refusal, "result refused")
            }
            // An audit task's result is compared, not spooled; an original may open an audit.
            if try audited(header, frames[2], from: worker) { return }
            spooler.submit(.init(worker: worker, header: header, payload: frames[2]))
        case .failure(let failure):
            if let refusal = machine.answerArrived(LeaseRef(segment: failure.segment, token: failure.token), from: worker) {
                return try refuse(failure.segment, from: worker, refusal, "failure report refused")
            }
            if audits.isAuditLease(failure.segment, worker: worker, token: failure.token) { return audits.unanswered(failure.segment) }
            meter.abandoned(failure.segment)
            // A worker that could not read its bytes: a replaced object fails the job, anything else is retried.
            if failure.code == .sourceUnreadable, holdUntilChecked(failure, from: worker) { return }
            if failure.code == .sourceNotAsProbed, let job = loaded[failure.segment.jobID], job.reader.readsByWorkers {
                // Not worth a job, nor an attempt: its tasks carry their packets from now on, as for a worker that reads none.
                logger.warning("a worker found its source bytes not as probed; tasks carry them",
                               metadata: ["job.id": "\(failure.segment.jobID)", "segment.index": "\(failure.segment.index)", "error": "\(failure.error)"])
                job.reader.stopWorkerReads()
                try store.release(failure.segment.jobID, failure.segment.index, worker: worker, token: failure.token, error: nil)
                return
            }
            try release(failure, from: worker)
        case .progress(let progress):
            // Only for a task in flight to this worker under that lease; anything else is ignored.
            guard UUID(uuidString: progress.lease.segment.jobID) != nil,
                  machine.peers[worker]?.inFlight[progress.lease.segment] == progress.lease.token,
                  !audits.isAuditLease(progress.lease.segment, worker: worker, token: progress.lease.token) else { return }
            meter.reported(progress.lease.segment, frames: progress.frames, now: now)
        case .busy(let lease):
            // A worker with no free slot (it took fewer than it said, or restarted): the lease goes back
            // at once, no attempt counted.
            if let refusal = machine.answerArrived(lease, from: worker) {
                return try refuse(lease.segment, from: worker, refusal, "busy reply refused")
            }
            if audits.isAuditLease(lease.segment, worker: worker, token: lease.token) {
                audits.unanswered(lease.segment)
                return machine.busyReply(worker)
            }
            try store.release(lease.segment.jobID, lease.segment.index, worker: worker, token: lease.token, error: nil)
            machine.busyReply(worker)
        case .bye(let handedBack):
            for ref in handedBack { try store.release(ref.jobID, ref.index, worker: worker, error: nil) }
            try store.releaseAll(worker: worker, reason: "worker \(worker) left", coordinator: options.coordinatorID)
            machine.workerLeft(worker)
            held[worker] = nil
            logger.info("worker left", metadata: ["worker.id": "\(worker)", "worker.handedBack": "\(handedBack.count)"])
        case .task, .cancel, .refused:
            logger.warning("dropped a message only coordinators send", metadata: ["peer": "\(worker)"])
        }
    }

    /// A result or failure that does not answer a lease of its sender: nothing changes but the job's events, which
    /// hear of it once per kind and interval (`RefusalLedger`); a worker refused too often is quarantined.
    func refuse(_ segment: SegmentRef, from worker: String, _ refusal: CoordinatorStateMachine.Refusal, _ what: String) throws {
        // An answer that crossed its job's end (a cancel reaching the worker after it sent it) is no refusal.
        guard refusal != .jobEnded else {
            return logger.debug("dropped an answer for an ended job", metadata: ["worker.id": "\(worker)", "job.id": "\(segment.jobID)",
                                                                               "segment.index": "\(segment.index)"])
        }
        let key = RefusalLedger.Key(worker: worker, job: segment.jobID, segment: segment.index, kind: "\(what): \(refusal)")
        switch refusals.refused(key, now: Stopwatch.now) {
        case .quiet:
            return
        case .record(let count):
            try recordRefusals(key, count: count)
        case .quarantine(let count):
            try quarantine(worker, because: "\(count) refused messages within \(Int(refusals.interval)) s", segment: segment)
        }
    }

    /// Records refusals of one kind: one event and one log line for `count` of them.
    func recordRefusals(_ key: RefusalLedger.Key, count: Int) throws {
        let reason = count == 1 ? key.kind : "\(key.kind) (\(count) times)"
        try store.recordRefusal(key.job, key.segment, worker: key.worker, reason: reason)
        logger.warning("refused a message", metadata: ["worker.id": "\(key.worker)", "job.id": "\(key.job)",
                                                       "segment.index": "\(key.segment)", "reason": "\(key.kind)", "refused.count": "\(count)"])
    }

    /// A worker that keeps sending refused messages, or whose encode an audit found wrong: its messages are dropped
    /// from now on, its leases go back, and it is told. Kept in the store until `tessera workers --lift`.
    func quarantine(_ worker: String, because why: String, segment: SegmentRef) throws {
        try spooler.drain()
        let identity = identity(of: worker)
        try store.quarantine(identity, worker: worker, reason: why)
        quarantinedKeys[worker] = identity
        machine.quarantine(worker)
        held[worker] = nil
        let returned = try store.releaseAll(worker: worker, reason: "worker \(worker) quarantined: \(why)", countAttempt: false,
                                            coordinator: options.coordinatorID)
        try store.recordRefusal(segment.jobID, segment.index, worker: worker, reason: "quarantined: \(why)")
        logger.error("worker quarantined", metadata: ["worker.id": "\(worker)", "reason": "\(why)", "segments": "\(returned)"])
        CoordinatorMetrics.workersQuarantined.increment()
        tell(worker, Self.quarantinedRefusal(why), now: Stopwatch.now)
    }

    /// Records the refusals counted quietly over an interval that ended.
    func recordDueRefusals() throws {
        for (key, count) in refusals.due(now: Stopwatch.now) { try recordRefusals(key, count: count) }
    }

    /// Workers whose key was removed from the authorized keys: forgotten, their leases back to pending.
    func revoke(_ workers: [String]) throws {
        guard !workers.isEmpty else { return }
        try spooler.drain()
        for id in workers {
            held[id] = nil
            let returned = try store.releaseAll(worker: id, reason: "worker \(id): its key was revoked", countAttempt: false,
                                                coordinator: options.coordinatorID)
            logger.warning("worker's key revoked, its leases return", metadata: ["worker.id": "\(id)", "segments": "\(returned)"])
        }
    }

    /// Notes what came of the results the spooler handled.
    func takeOutcomes() throws {
        var reportedDone = false
        defer { if reportedDone { try? recordProgress() } }
        for outcome in try spooler.takeOutcomes() {
            switch outcome {
            case .recorded(let ref, let encodeSeconds, let bytes, let at):
                machine.recorded(ref)
                if meter.completed(ref, frames: loaded[ref.jobID]?.segments[ref.index]?.frameCount ?? 0, now: at) { reportedDone = true }
                coordinator.phaseTimings.withValue {
                    $0.encodingWall = at - (firstTaskSent ?? at)
                    $0.workerEncode += encodeSeconds
                    $0.resultBytes += bytes
                }
            case .incompatible(let worker):
                machine.incompatible(worker)
            case .handedBack:
                machine.handedBack()
            case .stalled(let job, let fault):
                machine.handedBack()
                try stall(job, fault)
            }
        }
    }

    /// After the store's connection was made again: leases in a connected worker's name that it is not
    /// working on go back now, as when a worker joins, instead of waiting out the lease.
    func reconcile(_ working: [String: [SegmentRef: String]]) throws {
        try spooler.drain()
        for (id, segments) in working {
            try handBack(CoordinatorStateMachine.LeaseSort(stored: storedLeases(of: id), working: segments).handBack, of: id)
        }
    }

    /// The leases the store holds in `worker`'s name, from this coordinator.
    func storedLeases(of worker: String) throws -> [LeaseRef] {
        try store.leases(worker: worker, coordinator: options.coordinatorID).map {
            LeaseRef(segment: SegmentRef(jobID: $0.jobID, index: $0.index), token: $0.token)
        }
    }

    /// Hands `worker`'s leases of `segments` back, without charging an attempt.
    func handBack(_ segments: [SegmentRef], of worker: String) throws {
        for ref in segments { try store.release(ref.jobID, ref.index, worker: worker, error: nil) }
    }

    /// Silent workers' leases return, the others get a heartbeat, and expired leases are reaped.
    func perform(_ duties: CoordinatorStateMachine.Duties) throws {
        if !duties.silent.isEmpty { try spooler.drain() }
        for id in duties.silent {
            held[id] = nil
            let returned = try store.releaseAll(worker: id, reason: "worker \(id) went silent", coordinator: options.coordinatorID)
            logger.warning("worker silent, its leases return", metadata: ["worker.id": "\(id)", "segments": "\(returned)"])
        }
        for id in duties.heartbeat { try socket.send([Array(id.utf8)] + ClusterMessage.heartbeat.frames()) }
        guard duties.reap else { return }
        try followQuarantines()
        if duties.absentHolders {
            for holder in try store.leaseHolders(coordinator: options.coordinatorID) where !machine.isConnected(holder) {
                try store.releaseAll(worker: holder, reason: "worker \(holder) is not connected", countAttempt: false,
                                     coordinator: options.coordinatorID)
            }
        }
        let reaped = try store.reapExpiredLeases(attemptLimit: options.attemptLimit)
        CoordinatorMetrics.leasesExpired.increment(by: reaped.returned.count)
        machine.reaped()
        for job in reaped.failedJobs { drop(job) }
    }
}
