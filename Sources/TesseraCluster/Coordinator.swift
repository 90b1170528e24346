import FFmpegKit
import Foundation
import Logging
import TesseraCore
import TesseraEngine
import TesseraStore
import ZMQKit

/// Plans queued jobs, leases their segments from PostgreSQL to the workers connected over ZeroMQ,
/// receives the results into the spool, and stitches finished jobs. Everything it knows that matters
/// is in the store, so a coordinator killed and restarted resumes its jobs; done segments whose spool
/// file is intact are not encoded again.
///
/// One thread owns the ROUTER socket and a store connection (`run`); planning, loading and stitching
/// run on their own threads with their own connections, so heartbeats never wait for them.
public final class Coordinator: @unchecked Sendable {
    // Mutable state is confined to the run() thread; `events` and `endpoint` are locked.

    public struct Options: Sendable {
        public var bind: String
        public var databaseURL: String
        public var spool: URL
        public var coordinatorID: String
        public var heartbeatInterval: Double = 1
        public var liveness: Int = 3
        public var leaseSeconds: Double = 600
        public var attemptLimit: Int = 3
        /// Segments the plan aims for at least (keeps a cluster of this many encoders busy).
        public var planningWorkers: Int = 8
        public var maximumMessageSize: Int64 = 1 << 30
        /// Payload bytes the coordinator lets libzmq hold for its workers, sent but not yet on the wire:
        /// beyond it, no new task is packed until some have left (one always may when it is not full).
        /// Bounds its memory whatever the number of workers, the segments' size and the input's length:
        /// a network slower than packing gains nothing from payloads waiting in memory. Only connected
        /// workers count: what a worker found silent still holds (its host gone) stops counting then, so
        /// it cannot hold up the others; libzmq frees it when its own heartbeat closes that connection
        /// (twice the silence that ends a worker, see `run`).
        public var sendWindowBytes: Int = 16 << 20
        /// Only this job (the private coordinator of `tessera transcode`); nil: every job.
        public var onlyJob: String?
        /// Benchmark only: give work to workers that skip the encode (`--bench-skip-encode`), whose
        /// results are no video. Otherwise such workers get nothing.
        public var benchmark = false
        /// A probe of a job's input its submitter made moments ago (`tessera transcode`): planning uses
        /// it instead of reading the file again while it still describes the file (`ProbeResult.describes`).
        public var knownProbe: ProbeResult?

        public init(bind: String, databaseURL: String, spool: URL, coordinatorID: String = "coordinator-\(ProcessInfo.processInfo.processIdentifier)") {
            self.bind = bind
            self.databaseURL = databaseURL
            self.spool = spool
            self.coordinatorID = coordinatorID
        }
    }

    struct Peer {
        var identity: [UInt8]
        var slots: Int
        var inFlight: [ClusterMessage.SegmentRef: Int] = [:]
        var lastHeard = Date()
        /// When its leases were last extended (see the heartbeat handler).
        var renewed = Date.distantPast
        /// Produced headers that differ from a job's: another libx264 build. Gets no more work.
        var incompatible = false
        /// Payload bytes sent to it that libzmq still holds (counted in the send window while it is a
        /// peer; kept when it reconnects, since its old connection may still be sending).
        var held = HeldBytes()
    }

    struct JobContext {
        var plan: JobPlan
        var reader: SegmentReader
        var segments: [Int: PlannedSegment]
        /// Segments not yet recorded done: when the last one is, the job is swept at once.
        var outstanding: Set<Int>
        /// A payload's size on average (its video packets), to lease no more than the send window takes.
        var payloadBytes: Int
    }

    enum Event {
        case ready(String, JobPlan, outstanding: Set<Int>)
        case failed(String, String)
        case stitched(String)
        /// Another coordinator has the job: let go of it.
        case released(String)
    }

    let options: Options
    let logger: Logger
    let events = Locked<[Event]>([])
    let boundEndpoint = Locked<String?>(nil)
    var peers: [String: Peer] = [:]
    var contexts: [String: JobContext] = [:]
    var busy: Set<String> = []
    var dirty = true
    /// The last lease statement found fewer pending segments than it had slots for: dispatching asks the
    /// store nothing until something may have put segments back (a job event, a sweep, a reconnect, any
    /// message but a heartbeat or a result, a refused result, a silent worker, a reap, a lease this
    /// coordinator handed back). A free slot after each result costs no statement at a job's end.
    var nothingPending = false
    /// The store announced a change worth a sweep (or the last segment of a job was recorded).
    var notified = false
    let started = Date()
    let backgroundThreads = DispatchGroup()
    let phaseTimings = Locked(PhaseTimings())
    /// When the first task went out (run() thread only).
    var firstTaskSent: Double?
    /// Free slots waited on the send window at the last dispatch: look again soon, not only on the next
    /// message.
    var windowFull = false
    /// When the heartbeat next looks for expired leases.
    var nextReap = Date.distantPast
    /// Checks, spools and records results on its own thread (set by `run`).
    var spooler: ResultSpooler!

    /// Worker ids become file and log names: short, printable, no path separators.
    static func acceptable(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._@:-".contains($0)) }
    }

    public init(options: Options, logger: Logger = Logger(label: "tessera.coordinator")) {
        self.options = options
        self.logger = logger
    }

    /// The endpoint bound (with the real port when the option asked for `*`), once bound.
    public var endpoint: String? { boundEndpoint.current }

    /// Where this coordinator's time went so far, over every job it handled.
    public var timings: PhaseTimings { phaseTimings.current }

    public func run(stop: CancellationFlag) throws {
        ProcessAllocator.keepFreedMemory()
        let store = try JobStore(url: options.databaseURL, migrate: true)
        defer { store.close() }
        // This session's commits do not wait for the WAL flush: most of a segment's cost in the store
        // on one machine. It loses no work. A commit can only be lost when the PostgreSQL server
        // crashes (a coordinator crash does not lose it: the server flushes it within a fraction of a
        // second), and then the server comes back as it was at some earlier moment: the WAL is
        // written in order, so every later commit, ours or anyone's, is lost with it, and nothing is
        // ever half applied. The writes of this loop are each redone when lost: a lost lease leaves
        // the segment pending, so it is leased again (the task already sent becomes a late result,
        // refused because the lease is not that worker's); a lost completion leaves the segment
        // leased, so it is encoded again when the lease returns (see the reconnect check in the loop);
        // a lost hand-back, renewal or reap happens again; a lost claim or state change leaves the job
        // a step back, where this or another coordinator takes it up again. The planning, stitching
        // and control sessions keep durable commits.
        try Self.prepareLoopSession(store)
        try store.listen()
        spooler = try ResultSpooler(databaseURL: options.databaseURL, spool: options.spool, logger: logger, timings: phaseTimings)
        defer { spooler.stop() }
        let context = try ZMQContext()
        defer { context.close() }
        let socket = try ZMQSocket(context, .router)
        defer { socket.close() }
        try socket.setMaximumMessageSize(options.maximumMessageSize)
        // A worker that reconnects (same id) takes its identity over from the dead connection.
        try socket.setHandover(true)
        // libzmq closes a connection it heard nothing on for twice the silence that ends a worker, and
        // frees what it still held for it (a dead host's TCP connection could otherwise keep a payload
        // for as long as TCP retries).
        try socket.setHeartbeat(interval: options.heartbeatInterval, timeout: 2 * options.heartbeatInterval * Double(options.liveness))
        try socket.bind(options.bind)
        boundEndpoint.withValue { $0 = socket.lastEndpoint ?? options.bind }
        logger.info("coordinator listening", metadata: ["endpoint": "\(socket.lastEndpoint ?? options.bind)"])

        // Jobs this coordinator was planning or stitching when it died go back a step; other
        // coordinators' jobs are theirs.
        for id in try store.jobIDs(in: .planning, coordinator: options.coordinatorID) where mine(id) { try? store.setState(id, to: .queued) }
        for id in try store.jobIDs(in: .stitching, coordinator: options.coordinatorID) where mine(id) { try? store.setState(id, to: .encoding) }

        var nextBeat = Date(), nextSweep = Date(), lastSweep = Date.distantPast
        var nextNotificationLook = Date()
        var sessions = store.sessions
        while !stop.isCancelled {
            // Every waiting message first, so heartbeats are never read late.
            var timeout = windowFull ? 0.002 : 0.02
            while let frames = try socket.receiveFrames(timeout: timeout) {
                timeout = 0
                try step("message", \.results, store) { try handle(frames, socket, store) }
            }
            // What came of the results the spooler handled meanwhile.
            try step("results", \.results, store) { try takeOutcomes() }
            if store.sessions != sessions {
                sessions = store.sessions
                nothingPending = false
                // What was notified while the store was away is lost: sweep now.
                notified = true
                try step("reconnect", \.bookkeeping, store) { try reconcileLeases(store) }
            }
            for event in events.withValue({ q -> [Event] in defer { q.removeAll() }; return q }) {
                dirty = true
                nothingPending = false
                try step("job event", \.bookkeeping, store) { try apply(event, socket, store) }
            }
            let now = Date()
            if now >= nextBeat {
                try step("heartbeat", \.bookkeeping, store) { try heartbeat(socket, store) }
                nextBeat = now.addingTimeInterval(options.heartbeatInterval)
            }
            // A look at what the store has sent (no round trip), at most every 10 ms: a processor cost,
            // so it is bookkeeping's, not a wait on the store.
            if now >= nextNotificationLook {
                nextNotificationLook = now.addingTimeInterval(0.01)
                let cpu = Stopwatch.threadCPU
                // A job of ours that is still encoding notifies for every segment it records: nothing
                // to sweep for (its last segment sets `notified` in takeOutcomes).
                let changes = try store.waitForJobChanges(timeout: 0)
                if changes.contains(where: { contexts[$0.id] == nil || $0.state != .encoding }) { notified = true }
                let used = Stopwatch.threadCPU - cpu
                phaseTimings.withValue { $0.bookkeeping += used }
            }
            // Every finished segment notifies (the job's counters change): sweep for those at most
            // every 50 ms, or the store would be asked about every job once per segment. Without a
            // notification, every 5 s: a safety net (a reconnect sweeps at once, see above).
            if now >= nextSweep || (notified && now.timeIntervalSince(lastSweep) >= 0.05) {
                notified = false
                lastSweep = now
                nothingPending = false
                try step("sweep", \.bookkeeping, store) { try sweep(socket, store) }
                nextSweep = now.addingTimeInterval(5)
                dirty = true
            }
            if dirty {
                dirty = false
                try step("dispatch", \.dispatch, store) { try dispatch(socket, store) }
            }
        }
        logger.info("coordinator stopping")
        // Planning and stitching threads finish before the process may exit (no half-written output).
        backgroundThreads.wait()
    }

    /// Sets up a session of the loop or of the result spooler: commits that do not wait for the WAL flush
    /// (safe for these sessions' writes, see `run`) and statements planned once.
    static func prepareLoopSession(_ store: JobStore) throws {
        try store.commitWithoutWaitingForFlush()
        try store.planStatementsOnce()
    }

    /// Runs one part of the loop: what goes wrong because of one message or one job is logged and
    /// dropped; only a database that stays unreachable ends the coordinator. Its processor time goes to
    /// `phase` (see `PhaseTimings`), its waits on the store to `database`.
    func step(_ what: String, _ phase: WritableKeyPath<PhaseTimings, Double>, _ store: JobStore, _ body: () throws -> Void) throws {
        let started = Stopwatch.threadCPU, waited = store.queryTime
        defer {
            let database = store.queryTime - waited, cpu = Stopwatch.threadCPU - started
            phaseTimings.withValue {
                $0.database += database
                $0.loopDatabase += database
                $0[keyPath: phase] += cpu
            }
        }
        do {
            try body()
        } catch let error as StoreError where error.sqlState == nil && error.message.contains("connect") {
            throw error
        } catch {
            logger.warning("\(what) failed", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Messages

    func handle(_ frames: [ReceivedFrame], _ socket: ZMQSocket, _ store: JobStore) throws {
        guard frames.count >= 2 else { return }
        let identity = frames[0].bytes
        let worker = String(decoding: identity, as: UTF8.self)
        guard Array(worker.utf8) == identity, Self.acceptable(worker) else {
            logger.warning("dropped a message from an unacceptable identity")
            return
        }
        let message: ClusterMessage
        do {
            // A result's payload (megabytes) goes to the spooler where libzmq received it.
            message = try ClusterMessage(head: frames[1].bytes, payloadFrames: frames.count - 2)
        } catch {
            logger.warning("dropped a malformed message", metadata: ["peer": "\(worker)", "error": "\(error)"])
            return
        }
        peers[worker]?.lastHeard = Date()
        dirty = true
        if let ref = message.segment, UUID(uuidString: ref.jobID) == nil {
            logger.warning("dropped a message for a job id that is not one", metadata: ["peer": "\(worker)"])
            return
        }
        if case .bye(let refs) = message, refs.contains(where: { UUID(uuidString: $0.jobID) == nil }) {
            logger.warning("dropped a bye with a job id that is not one", metadata: ["peer": "\(worker)"])
            return
        }
        switch message {
        case .result, .heartbeat: break
        // Anything else may hand a lease back: the results before it are recorded first.
        default:
            try spooler.drain()
            nothingPending = false
        }
        switch message {
        case .ready(let ready):
            guard ready.workerID == worker else {
                logger.warning("dropped a ready whose id is not its identity", metadata: ["peer": "\(worker)"])
                return
            }
            var peer = Peer(identity: identity, slots: min(max(ready.slots, 1), 64))
            if let known = peers[worker] { peer.held = known.held }
            if ready.capabilities[BenchResult.capability] != nil, !options.benchmark {
                peer.incompatible = true
                logger.warning("a benchmark worker (no encoding) gets no work", metadata: ["worker.id": "\(worker)"])
            }
            try store.heartbeat(worker: worker, host: ready.host, capabilities: ready.capabilities)
            // Leases in its name that it is not working on (results lost while we were apart) go back.
            peer.inFlight = try returnLeases(of: worker, notIn: Set(ready.inFlight), store)
            peers[worker] = peer
            logger.info("worker joined", metadata: ["worker.id": "\(worker)", "worker.slots": "\(ready.slots)"])
        case .heartbeat:
            // Alive: its leases hold. Extended a quarter lease at a time, not on every heartbeat: a
            // lease is taken out whole, so this only matters for encodes longer than a lease.
            if let peer = peers[worker], !peer.inFlight.isEmpty, Date().timeIntervalSince(peer.renewed) >= options.leaseSeconds / 4 {
                try store.renewAll(worker: worker, seconds: options.leaseSeconds)
                peers[worker]?.renewed = Date()
            }
        case .result(let header, _):
            peers[worker]?.inFlight[header.segment] = nil
            spooler.submit(.init(worker: worker, header: header, payload: frames[2]))
        case .failure(let failure):
            peers[worker]?.inFlight[failure.segment] = nil
            if try store.release(failure.segment.jobID, failure.segment.index, worker: worker, error: failure.error) {
                logger.warning("segment failed", metadata: ["job.id": "\(failure.segment.jobID)", "segment.index": "\(failure.segment.index)",
                                                            "error": "\(failure.error)"])
            }
        case .bye(let handedBack):
            for ref in handedBack { try store.release(ref.jobID, ref.index, worker: worker, error: nil) }
            try store.releaseAll(worker: worker, reason: "worker \(worker) left")
            peers[worker] = nil
            logger.info("worker left", metadata: ["worker.id": "\(worker)", "worker.handedBack": "\(handedBack.count)"])
        case .task, .cancel:
            logger.warning("dropped a message only coordinators send", metadata: ["peer": "\(worker)"])
        }
    }

    /// Notes what came of the results the spooler handled: the segments still to come of each job
    /// (its last one calls for a sweep), workers whose headers differ, and the encoding's timings.
    func takeOutcomes() throws {
        for outcome in try spooler.takeOutcomes() {
            switch outcome {
            case .recorded(let ref, let encodeSeconds, let bytes, let at):
                if contexts[ref.jobID]?.outstanding.remove(ref.index) != nil, contexts[ref.jobID]?.outstanding.isEmpty == true {
                    notified = true
                }
                phaseTimings.withValue {
                    $0.encodingWall = at - (firstTaskSent ?? at)
                    $0.workerEncode += encodeSeconds
                    $0.resultBytes += bytes
                }
            case .incompatible(let worker):
                peers[worker]?.incompatible = true
                nothingPending = false
            case .handedBack:
                nothingPending = false
            }
        }
    }

    /// After the connection to the store was made again (the server may have restarted and forgotten
    /// our last commits, see `run`): leases in a connected worker's name that it is not working on go
    /// back now, as when a worker joins, instead of waiting out the lease.
    func reconcileLeases(_ store: JobStore) throws {
        try spooler.drain()
        for (id, peer) in peers { _ = try returnLeases(of: id, notIn: Set(peer.inFlight.keys), store) }
    }

    /// Hands back, without charging an attempt, the leases in `worker`'s name that it is not working on;
    /// returns the others with the attempt each is on.
    func returnLeases(of worker: String, notIn working: Set<ClusterMessage.SegmentRef>,
                      _ store: JobStore) throws -> [ClusterMessage.SegmentRef: Int] {
        var kept: [ClusterMessage.SegmentRef: Int] = [:]
        for lease in try store.leases(worker: worker) {
            let ref = ClusterMessage.SegmentRef(jobID: lease.jobID, index: lease.index)
            if working.contains(ref) { kept[ref] = lease.attempts + 1 } else {
                try store.release(lease.jobID, lease.index, worker: worker, error: nil)
            }
        }
        return kept
    }

    // MARK: Liveness

    func heartbeat(_ socket: ZMQSocket, _ store: JobStore) throws {
        let deadline = Date().addingTimeInterval(-options.heartbeatInterval * Double(options.liveness))
        for (id, peer) in peers {
            if peer.lastHeard < deadline {
                try spooler.drain()
                let returned = try store.releaseAll(worker: id, reason: "worker \(id) went silent")
                peers[id] = nil
                nothingPending = false
                logger.warning("worker silent, its leases return", metadata: ["worker.id": "\(id)", "segments": "\(returned)"])
                continue
            }
            try socket.send([peer.identity] + ClusterMessage.heartbeat.frames())
        }
        // Expired leases, and leases of workers that never came back after a coordinator restart, are
        // looked for every few seconds (a lease lasts minutes), not on every heartbeat.
        if Date() >= nextReap {
            if Date().timeIntervalSince(started) > options.heartbeatInterval * Double(options.liveness) + 35 {
                for holder in try store.leaseHolders(coordinator: options.coordinatorID) where peers[holder] == nil {
                    try store.releaseAll(worker: holder, reason: "worker \(holder) is not connected", countAttempt: false)
                }
            }
            let reaped = try store.reapExpiredLeases(attemptLimit: options.attemptLimit)
            // Leases of workers not connected (above) or expired may have come back.
            nothingPending = false
            for job in reaped.failedJobs { drop(job, socket) }
            nextReap = Date().addingTimeInterval(min(5, options.leaseSeconds / 4))
        }
    }

    // MARK: Jobs

    /// New jobs to plan, encoding jobs to load, finished ones to stitch, ended ones to forget.
    func sweep(_ socket: ZMQSocket, _ store: JobStore) throws {
        while let job = try store.claimQueuedJob(coordinator: options.coordinatorID, only: options.onlyJob) {
            background(job.id) { store in try self.prepare(job.id, store: store, planNew: true) }
        }
        for id in try store.jobIDs(in: .encoding, coordinator: options.coordinatorID) where mine(id) && contexts[id] == nil && !busy.contains(id) {
            background(id) { store in try self.prepare(id, store: store, planNew: false) }
        }
        for (id, _) in contexts {
            let job = try store.job(id)
            if job.state.isFinal {
                drop(id, socket)
            } else if job.state == .encoding, job.segmentsTotal > 0, job.segmentsDone == job.segmentsTotal, !busy.contains(id) {
                guard (try? store.setState(id, to: .stitching)) != nil else { continue }
                let plan = contexts[id]!.plan
                background(id) { store in try self.stitch(id, plan, store) }
            }
        }
    }

    func apply(_ event: Event, _ socket: ZMQSocket, _ store: JobStore) throws {
        switch event {
        case .ready(let id, let plan, let outstanding):
            busy.remove(id)
            do {
                let videoBytes = plan.probe.packets.reduce(0) { $0 + $1.size }
                contexts[id] = JobContext(plan: plan, reader: try SegmentReader(plan: plan),
                                          segments: Dictionary(uniqueKeysWithValues: plan.cuts.segments.map { ($0.index, $0) }),
                                          outstanding: outstanding, payloadBytes: videoBytes / max(plan.cuts.segments.count, 1))
            } catch {
                try? store.setState(id, to: .failed, error: error.description)
            }
        case .failed(let id, let reason):
            busy.remove(id)
            let job = try store.job(id)
            if !job.state.isFinal { try? store.setState(id, to: .failed, error: reason) }
            drop(id, socket)
        case .stitched(let id):
            busy.remove(id)
            drop(id, socket)
        case .released(let id):
            busy.remove(id)
            contexts[id] = nil
        }
    }

    func mine(_ job: String) -> Bool { options.onlyJob == nil || options.onlyJob == job }

    func cancelInFlight(_ job: String, _ socket: ZMQSocket) {
        for (id, peer) in peers where peer.inFlight.keys.contains(where: { $0.jobID == job }) {
            try? socket.send([peer.identity] + ClusterMessage.cancel(jobID: job).frames())
            peers[id]?.inFlight = peer.inFlight.filter { $0.key.jobID != job }
        }
    }

    /// Forgets a job that ended: its encodes stop, its late results are dropped, its spool goes.
    func drop(_ job: String, _ socket: ZMQSocket) {
        cancelInFlight(job, socket)
        contexts[job] = nil
        // Its results already received are handled first (none is written into the spool after it goes).
        spooler.end(job)
        try? FileManager.default.removeItem(at: options.spool.appendingPathComponent(job))
    }

    /// Leases work for every worker with free slots, from the jobs whose plans are loaded.
    func dispatch(_ socket: ZMQSocket, _ store: JobStore) throws {
        guard !contexts.isEmpty else { return }
        let jobs = Array(contexts.keys)
        // One statement for every free slot; the slots interleave the workers, so that a short queue
        // is shared among them.
        var free = peers.filter { !$0.value.incompatible }.map { (id: $0.key, free: $0.value.slots - $0.value.inFlight.count) }
            .filter { $0.free > 0 }.sorted { $0.id < $1.id }
        var slots: [String] = []
        while !free.isEmpty {
            for n in free.indices { slots.append(free[n].id); free[n].free -= 1 }
            free.removeAll { $0.free == 0 }
        }
        windowFull = false
        guard !slots.isEmpty, !nothingPending else { return }
        // No more than the send window takes (one at least when it is not full).
        let held = peers.values.reduce(0) { $0 + $1.held.bytes }, payload = max(contexts.values.map(\.payloadBytes).max() ?? 1, 1)
        let window = options.sendWindowBytes
        let fitting = held >= window ? 0 : max(1, (window - held) / payload)
        if slots.count > fitting {
            slots.removeLast(slots.count - fitting)
            windowFull = true
            dirty = true
            guard !slots.isEmpty else { return }
        }
        var failure: (any Error)?
        let leases = try store.lease(slots: slots, seconds: options.leaseSeconds, jobs: jobs, attemptLimit: options.attemptLimit)
        // Fewer than asked for: none left (a release below, or anything that may put one back, says otherwise).
        nothingPending = leases.count < slots.count
        for (id, lease) in leases {
            guard let peer = peers[id] else {
                nothingPending = false
                try store.release(lease.jobID, lease.index, worker: id, error: nil)
                continue
            }
            do {
                guard let context = contexts[lease.jobID], let segment = context.segments[lease.index] else {
                    nothingPending = false
                    try store.release(lease.jobID, lease.index, worker: id, error: nil)
                    continue
                }
                let payload: [UInt8]
                let packingStarted = Stopwatch.threadCPU
                do {
                    payload = try context.reader.payload(for: segment)
                } catch {
                    try store.release(lease.jobID, lease.index, worker: id, error: nil)
                    try? store.setState(lease.jobID, to: .failed, error: error.description)
                    drop(lease.jobID, socket)
                    continue
                }
                let packing = Stopwatch.threadCPU - packingStarted
                let ref = ClusterMessage.SegmentRef(jobID: lease.jobID, index: lease.index)
                try socket.send([peer.identity] + ClusterMessage.task(.init(segment: ref, attempt: lease.attempts + 1),
                                                                      payload: payload).frames(), peerHeld: peer.held)
                peers[id]?.inFlight[ref] = lease.attempts + 1
                if firstTaskSent == nil { firstTaskSent = Stopwatch.now }
                // Packing is its own phase; step() charges the whole dispatch to `dispatch`.
                phaseTimings.withValue {
                    $0.payloadPacking += packing
                    $0.dispatch -= packing
                    $0.segmentsDispatched += 1
                    $0.payloadBytes += Int64(payload.count)
                }
            } catch {
                // The rest of the leases still go out; this one goes back (it was not sent).
                nothingPending = false
                _ = try? store.release(lease.jobID, lease.index, worker: id, error: nil)
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
    }

    /// Runs `work` on its own thread with its own store connection; failures fail the job.
    func background(_ job: String, _ work: @escaping @Sendable (JobStore) throws -> Void) {
        busy.insert(job)
        let url = options.databaseURL
        let events = self.events
        let timings = phaseTimings
        startThread(name: "tessera-job-\(job.prefix(8))", group: backgroundThreads) {
            do {
                let started = Stopwatch.now
                let store = try JobStore(url: url)
                let connecting = Stopwatch.now - started
                defer {
                    store.close()
                    timings.withValue { $0.database += connecting + store.queryTime }
                }
                try work(store)
            } catch {
                events.withValue { $0.append(.failed(job, "\(error)")) }
            }
        }
    }
}
