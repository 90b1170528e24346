import Foundation
import TesseraCore
import TesseraEngine
import TesseraStore
import ZMQKit

extension CoordinatorLoop {
    /// New jobs to plan, encoding jobs to load, finished ones to stitch, ended ones to forget.
    func sweep() throws {
        let coordinator = self.coordinator
        // Planned as its work is about to be leased (a job of a higher priority than all pending at once), in the
        // lease order (`LeaseOrder.claims`): the queue is read once a sweep, claimed jobs drop out of it.
        let ranked = options.onlyJob == nil
            ? LeaseOrder(maxWait: machine.configuration.maxWait).claims(try store.queuedJobs(coordinator: options.coordinatorID)) : []
        while true {
            let wanted = options.onlyJob != nil || machine.wantsJobs
            let claimed = options.onlyJob == nil
                ? try store.claimQueuedJob(coordinator: options.coordinatorID, ranked: ranked, outranking: !wanted)
                : try store.claimQueuedJob(coordinator: options.coordinatorID, only: options.onlyJob, outranking: !wanted)
            guard let job = claimed else {
                machine.claimed(leftWaiting: !wanted)
                break
            }
            machine.planningStarted(job.id)
            let encoders = machine.encoders
            coordinator.background(job.id) { store in try coordinator.prepare(job.id, store: store, planNew: true, encoders: encoders) }
        }
        for id in try store.jobIDs(in: .encoding, coordinator: options.coordinatorID) where coordinator.mine(id) && machine.needsLoading(id) {
            background(id) { store in try coordinator.prepare(id, store: store, planNew: false, encoders: 0) }
        }
        for id in machine.jobs.keys.sorted() {
            let job = try store.job(id)
            let stored = CoordinatorStateMachine.StoredJob(heldHere: job.coordinator == options.coordinatorID, state: job.state,
                                                           segmentsDone: job.segmentsDone, segmentsTotal: job.segmentsTotal)
            switch machine.sweepAction(id, stored) {
            case nil: break
            case .lost: lost(id)
            case .forget: drop(id)
            case .allocateSecondPass:
                // An open audit holds the job: its segment may yet be encoded again.
                guard let plan = loaded[id]?.plan, !audits.holds(id) else { continue }
                background(id) { store in try coordinator.allocate(id, plan, store) }
            case .stitch:
                guard let plan = loaded[id]?.plan, !audits.holds(id), (try? store.setState(id, to: .stitching)) != nil else { continue }
                try recordAuditCost(id)
                background(id) { store in try coordinator.stitch(id, plan, store) }
            }
        }
    }

    func background(_ job: String, _ work: @escaping @Sendable (any CoordinatorStore) throws -> Void) {
        machine.backgroundStarted(job)
        coordinator.background(job, work)
    }

    /// What a job's own thread reported.
    func apply(_ event: Coordinator.Event) throws {
        switch event {
        case .ready(let id, var plan, let outstanding):
            machine.backgroundEnded(id)
            let record = try? store.job(id)
            auditRates[id] = record?.spec.audit
            // An audited job's encodes must repeat on any worker alike, threads or not.
            plan.repeatable = (auditRates[id] ?? coordinator.options.auditRate) > 0
            do {
                let videoBytes = plan.probe.packets.reduce(0) { $0 + $1.size }
                let segments = Dictionary(uniqueKeysWithValues: plan.cuts.segments.map { ($0.index, $0) })
                let reader = try SegmentReader(plan: plan, urlSeconds: SourceRanges.urlLifetime(leaseSeconds: options.leaseSeconds))
                loaded[id] = LoadedJob(plan: plan, reader: reader, segments: segments)
                spooler.take(id)
                machine.jobLoaded(id, segments: Set(segments.keys), outstanding: outstanding,
                                  payloadBytes: videoBytes / max(segments.count, 1), pass: plan.pass,
                                  standing: Self.standing(record, plan: plan, now: Stopwatch.now))
            } catch {
                try? store.setState(id, to: .failed, error: error.description)
            }
        case .failed(let id, let reason):
            machine.backgroundEnded(id)
            if try !store.job(id).state.isFinal { try? store.setState(id, to: .failed, error: reason) }
            drop(id)
        case .stitched(let id):
            machine.backgroundEnded(id)
            drop(id)
        case .released(let id):
            machine.backgroundEnded(id)
            machine.jobReleased(id)
            loaded[id] = nil
            coordinator.audioAhead.drop(id)
        case .stalled(let id, let fault):
            // Its output could not be written: back to encoding (all done), stitched again once the fault clears.
            machine.backgroundEnded(id)
            if (try? store.job(id).state) == .stitching { try store.setState(id, to: .encoding) }
            try stall(id, fault)
        }
    }

    /// A loaded job's place in the lease order: its priority, when it was submitted (the store's time,
    /// on the machine's clock `now`), and each segment's frames times its output pixels.
    static func standing(_ record: JobRecord?, plan: JobPlan, now: Double) -> CoordinatorStateMachine.Standing {
        let pixels = Double(plan.framePixels)
        let waited = record.flatMap { Self.timestamp($0.createdAt) }.map { max(0, Date().timeIntervalSince($0)) } ?? 0
        return .init(priority: record?.priority ?? JobStore.defaultPriority, submitted: now - waited,
                     work: Dictionary(uniqueKeysWithValues: plan.cuts.segments.map { ($0.index, Double($0.frameCount) * pixels) }))
    }

    /// A store timestamp (ISO 8601 in UTC, with or without milliseconds).
    static func timestamp(_ text: String) -> Date? {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = format.date(from: text) { return date }
        format.formatOptions = [.withInternetDateTime]
        return format.date(from: text)
    }

    /// Forgets a job that ended: its encodes stop, its late results are dropped, its spool goes. With
    /// `keepingSpool` (another coordinator took the job over), the spool stays for that one to read.
    func drop(_ job: String, keepingSpool: Bool = false) {
        for worker in machine.jobDropped(job) {
            try? socket.send([Array(worker.utf8)] + ClusterMessage.cancel(jobID: job).frames())
        }
        loaded[job] = nil
        faults[job] = nil
        coordinator.audioAhead.drop(job)
        meter.dropped(job)
        _ = audits.jobDropped(job)
        auditRates[job] = nil
        // Its results already received are handled first (none is written into the spool after it goes).
        spooler.end(job)
        if !keepingSpool { ResultSpool.remove(job, in: options.spool) }
    }

    /// Leases work for the free slots and sends it.
    func dispatch() throws {
        let heldBytes = machine.peers.keys.reduce(0) { $0 + (held[$1]?.bytes ?? 0) }
        // Audit tasks first: a job waits on them.
        try dispatchAudits()
        guard case .lease(let slots, let jobs) = machine.dispatch(heldBytes: heldBytes) else { return }
        let leases = try store.lease(slots: slots, seconds: options.leaseSeconds, ranked: jobs, attemptLimit: options.attemptLimit,
                                     coordinator: options.coordinatorID)
        let rows = leases.map { (worker: $0.worker, segment: SegmentRef(jobID: $0.lease.jobID, index: $0.lease.index),
                                 attempts: $0.lease.attempts, token: $0.lease.token) }
        var failure: (any Error)?
        for action in machine.leased(rows, asked: slots.count) {
            switch action {
            case .handBack(let worker, let ref):
                try store.release(ref.jobID, ref.index, worker: worker, error: nil)
            case .send(let worker, let ref, let attempt, let token):
                do {
                    try send(ref, to: worker, attempt: attempt, token: token)
                } catch {
                    // The rest still go out; this lease goes back (it was not sent).
                    machine.notSent()
                    _ = try? store.release(ref.jobID, ref.index, worker: worker, error: nil)
                    failure = failure ?? error
                }
            }
        }
        if let failure { throw failure }
    }

    /// Packs a segment's payload and sends its task; a payload that cannot be read fails the job.
    func send(_ ref: SegmentRef, to worker: String, attempt: Int, token: String) throws {
        guard let job = loaded[ref.jobID], let segment = job.segments[ref.index] else { return }
        let payload: [UInt8]
        let packingStarted = Stopwatch.threadCPU
        let shippedBefore = job.reader.shippedSourceBytes
        do {
            payload = try job.reader.payload(for: segment, workerReads: sourceReaders[worker] ?? 0)
        } catch {
            try store.release(ref.jobID, ref.index, worker: worker, error: nil)
            try? store.setState(ref.jobID, to: .failed, error: error.description)
            drop(ref.jobID)
            return
        }
        let packing = Stopwatch.threadCPU - packingStarted
        try socket.send([Array(worker.utf8)] + ClusterMessage.task(.init(segment: ref, attempt: attempt, token: token), payload: payload).frames(),
                        peerHeld: held[worker])
        machine.sent(ref, to: worker, token: token)
        CoordinatorMetrics.payloadSent.increment(by: payload.count)
        CoordinatorMetrics.sourceSent.increment(by: Int(job.reader.shippedSourceBytes - shippedBefore))
        if firstTaskSent == nil { firstTaskSent = Stopwatch.now }
        // Packing is its own phase; step() charges the whole dispatch to `dispatch`.
        coordinator.phaseTimings.withValue {
            $0.payloadPacking += packing
            $0.dispatch -= packing
            $0.segmentsDispatched += 1
            $0.payloadBytes += Int64(payload.count)
        }
    }

    /// After a worker could not read a task's bytes from object storage: its failure waits while the job's input is
    /// checked off the loop (`checked`). False when the job is not loaded here (the failure is answered at once).
    func holdUntilChecked(_ failure: ClusterMessage.Failure, from worker: String) -> Bool {
        let id = failure.segment.jobID
        guard let job = loaded[id] else { return false }
        unreadable[id, default: []].append((failure, worker))
        checkInput(of: id, job.plan)
        return true
    }

    /// Asks for `job`'s input to be checked off the loop; the answer comes to `checked`.
    func checkInput(of job: String, _ plan: JobPlan) {
        inputChecks.check(job) { () throws(TesseraError) in try plan.checkInput() }
    }

    /// A check's answer: a job whose input is not the object (or file) it pinned any more fails naming it, as a
    /// payload the coordinator cannot read fails it; the failures held for the answer are released, charged as
    /// attempts, so that the segments are retried when the input is still the one.
    func checked(_ outcome: InputChecks.Outcome) throws {
        let held = unreadable.removeValue(forKey: outcome.job) ?? []
        for (failure, worker) in held { try release(failure, from: worker) }
        guard let error = outcome.error, loaded[outcome.job] != nil else { return }
        logger.error("the input changed under a job", metadata: ["job.id": "\(outcome.job)", "error": "\(error)"])
        try? store.setState(outcome.job, to: .failed, error: error.description)
        drop(outcome.job)
    }

    /// A worker's failure to encode a task: the lease goes back, an attempt charged.
    func release(_ failure: ClusterMessage.Failure, from worker: String) throws {
        if try store.release(failure.segment.jobID, failure.segment.index, worker: worker, token: failure.token, error: failure.error) {
            logger.warning("segment failed", metadata: ["job.id": "\(failure.segment.jobID)", "segment.index": "\(failure.segment.index)",
                                                        "error": "\(failure.error)"])
        }
    }
}
