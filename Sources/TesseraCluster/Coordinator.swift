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
/// One thread owns the ROUTER socket and a store connection (`run`, through `CoordinatorLoop`, which
/// acts on what `CoordinatorStateMachine` decides); planning, loading and stitching run on their own
/// threads with their own connections and report back through `events`, so heartbeats never wait for them.
public final class Coordinator: Sendable {
    /// What a job's own thread reports back to the loop.
    enum Event {
        case ready(String, JobPlan, outstanding: Set<Int>)
        case failed(String, String)
        case stitched(String)
        /// Another coordinator has the job: let go of it.
        case released(String)
        /// Its output could not be written for a reason of this host (disk full): it waits.
        case stalled(String, LocalFault)
    }

    let options: Options
    let logger: Logger
    let events = CoordinatorEvents()
    let boundEndpoint = Locked<String?>(nil)
    /// The endpoint, handed once bound; withdrawn when the run ends without binding.
    let bound = Handoff<String>()
    let phaseTimings = Locked(PhaseTimings())
    let backgroundThreads = DispatchGroup()
    /// Store connections of finished job threads, for the next ones.
    let idleStores = StoreShelf()
    /// Jobs' audio, made while their video encodes.
    let audioAhead = AudioAhead()
    /// A probe of a job's input its submitter made moments ago (`tessera transcode`, handed over with
    /// `know`): planning uses it instead of reading the file again while it still describes the file
    /// (`ProbeResult.describes`).
    let knownProbe = Locked<ProbeResult?>(nil)
    /// SIGHUP asked for the authorized keys to be read again.
    let keysReloadAsked = Locked(false)
    /// The stop flag of the run under way: store connections waiting out an outage give up once it is set
    /// (or once the run ended).
    let running = Locked<CancellationFlag?>(nil)
    /// Opens the loop's, the spooler's and the job threads' store sessions.
    let stores: CoordinatorStoreSessions
    /// A libzmq context its caller owns, for `inproc://` endpoints (reached only from the same context); nil:
    /// a context of its own for each run.
    let sharedContext: ZMQContext?

    /// Worker ids become file and log names: short, printable, no path separators.
    static func acceptable(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._@:-".contains($0)) }
    }

    public init(options: Options, logger: Logger = Logger(label: "tessera.coordinator"), stores: CoordinatorStoreSessions? = nil,
                context: ZMQContext? = nil) {
        self.options = options
        self.logger = logger
        self.stores = stores ?? .postgres(url: options.databaseURL)
        sharedContext = context
    }

    /// Takes `probe` for its file's job (before the job is queued).
    public func know(_ probe: ProbeResult) { knownProbe.withValue { $0 = probe } }

    /// The endpoint bound (with the real port when the option asked for `*`), once bound.
    public var endpoint: String? { boundEndpoint.current }

    /// Where this coordinator's time went so far, over every job it handled.
    public var timings: PhaseTimings {
        var timings = phaseTimings.current
        timings.zmqIO = Self.libzmqIOThreadsCPU()
        return timings
    }

    /// Runs until `stop` is cancelled, then waits for planning and stitching threads (no half-written
    /// output). An unreachable store is waited for; throws on what cannot be waited out (a bad URL, the bind).
    public func run(stop: CancellationFlag) throws {
        ProcessAllocator.keepFreedMemory()
        running.withValue { $0 = stop }
        defer {
            running.withValue { $0 = nil }
            bound.withdraw()
        }
        // An unreachable store is waited for, here and on every connection after: a coordinator outlives
        // a PostgreSQL outage of any length.
        let store: any CoordinatorStore
        do {
            store = try stores.open(true, storePatience)
        } catch {
            // Stopped while waiting for the store: nothing to wind down.
            if stop.isCancelled { return }
            throw error
        }
        defer { store.close() }
        // Commits that do not wait for the WAL flush: see docs/architecture.md, "The loop's commits".
        try Self.prepareLoopSession(store)
        try store.listen()
        // A private coordinator's one job is on its way: its planning thread finds a session open.
        if options.onlyJob != nil {
            let (shelf, stores, patience) = (idleStores, stores, storePatience)
            startThread(name: "tessera-store", group: backgroundThreads) {
                if let ready = try? stores.open(false, patience) { shelf.put(ready) }
            }
        }
        let spooler = ResultSpooler(spool: options.spool, logger: logger, timings: phaseTimings, wake: events.doorbell)
        try spooler.run(stores: stores, patience: storePatience)
        defer { spooler.stop() }
        let context = try sharedContext ?? ZMQContext(ioThreads: options.ioThreads)
        defer { if context !== sharedContext { context.close() } }
        let socket = try ZMQSocket(context, .router)
        defer { socket.close() }
        try socket.setMaximumMessageSize(options.maximumMessageSize)
        // An id belongs to its connection while that lives: a second connection with the same id gets and
        // gives nothing until the first is gone (a worker that reconnects closed its old one; a dead host's
        // is closed by the heartbeat below), so no peer can take over a live worker's id and leases.
        try socket.setHandover(false)
        // libzmq closes a connection silent for twice what ends a worker, and frees what it still held
        // for it (a dead host's TCP connection could otherwise keep a payload as long as TCP retries).
        try socket.setHeartbeat(interval: options.heartbeatInterval, timeout: 2 * options.heartbeatInterval * Double(options.liveness))
        // With keys, the ZAP handler is up before the socket binds: a CURVE server without one admits any key.
        var authorized: AuthorizedKeys?
        let zapStop = CancellationFlag(), zapDone = DispatchGroup()
        defer {
            zapStop.cancel()
            zapDone.wait()
        }
        if let security = options.security {
            let keys = try AuthorizedKeys(path: security.authorizedKeysPath, logger: logger)
            try serveZAP(ZAPHandler(context), keys, stop: zapStop, done: zapDone)
            try socket.setCurveServer(secretKey: security.keys.secretKey)
            authorized = keys
            logger.info("workers authenticate with CURVE keys", metadata: ["coordinator.key": "\(security.keys.publicKey)",
                                                                         "keys": "\(keys.keys.count)"])
        } else if options.bind.hasPrefix("tcp://") {
            logger.warning("insecure: no encryption, and any peer that reaches \(options.bind) may join as a worker")
        }
        try socket.bind(options.bind)
        boundEndpoint.withValue { $0 = socket.lastEndpoint ?? options.bind }
        bound.hand(socket.lastEndpoint ?? options.bind)
        logger.info("coordinator listening", metadata: ["endpoint": "\(socket.lastEndpoint ?? options.bind)"])

        // Registered before anything else: other coordinators see it alive before it acts on the store.
        try store.coordinatorHeartbeat(options.coordinatorID, host: ProcessInfo.processInfo.hostName, endpoint: endpoint)
        // Jobs this coordinator was planning or stitching when it died go back a step; other
        // coordinators' jobs are theirs.
        for id in try store.jobIDs(in: .planning, coordinator: options.coordinatorID) where mine(id) { try? store.setState(id, to: .queued) }
        for id in try store.jobIDs(in: .stitching, coordinator: options.coordinatorID) where mine(id) { try? store.setState(id, to: .encoding) }

        defer {
            logger.info("coordinator stopping")
            backgroundThreads.wait()
            idleStores.closeAll()
        }
        let loop = CoordinatorLoop(self, store: store, socket: socket, spooler: spooler, authorized: authorized)
        try loop.run(until: stop)
        // Stopped on purpose: once its stitches are done, its jobs go to the other coordinators now, not
        // after `--takeover-after`.
        backgroundThreads.wait()
        try? store.coordinatorLeft(options.coordinatorID)
    }

    /// Answers ZAP requests on a thread of its own, and reads the authorized keys again when their file
    /// changes (looked at every second) or SIGHUP asks.
    func serveZAP(_ zap: ZAPHandler, _ keys: AuthorizedKeys, stop: CancellationFlag, done: DispatchGroup) {
        let logger = self.logger, reloadAsked = keysReloadAsked
        startThread(name: "tessera-zap", group: done) {
            defer { zap.close() }
            var nextLook = Stopwatch.now + 1
            while !stop.isCancelled {
                do {
                    try zap.serve(timeout: 0.1) { keys.admit(key: $0.publicKey, address: $0.address) }
                } catch {
                    logger.error("the ZAP handler failed; no worker can connect", metadata: ["error": "\(error)"])
                    return
                }
                if reloadAsked.withValue({ asked in defer { asked = false }; return asked }) {
                    keys.reload()
                } else if Stopwatch.now >= nextLook {
                    keys.reloadIfChanged()
                    nextLook = Stopwatch.now + 1
                }
            }
        }
    }

    /// Processor seconds libzmq's I/O threads of this process used so far (Linux: the tasks named
    /// `ZMQbg/IO/N`); 0 where that cannot be read.
    static func libzmqIOThreadsCPU() -> Double {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return 0 }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return tasks.reduce(0) { total, task in
            guard let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8), name.hasPrefix("ZMQbg/IO"),
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return total }
            // After the name: state is field 3; utime and stime are fields 14 and 15.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return total }
            return total + (user + system) / ticks
        }
    }

    /// Reads the authorized keys again (SIGHUP).
    public func reloadAuthorizedKeys() {
        keysReloadAsked.withValue { $0 = true }
    }

    /// Sets up a session of the loop or of the result spooler: commits that do not wait for the WAL flush
    /// (safe for these sessions' writes, see docs/architecture.md) and statements planned once.
    static func prepareLoopSession(_ store: any CoordinatorStore) throws {
        try store.commitWithoutWaitingForFlush()
        try store.planStatementsOnce()
    }

    /// How every store connection of this coordinator waits out an outage: retrying until it stops,
    /// saying so every 10 s.
    var storePatience: StorePatience {
        let logger = self.logger
        return StorePatience(keepGoing: { [running] in running.current.map { !$0.isCancelled } ?? false }, report: { seconds, error in
            logger.warning("the job store is unreachable; retrying", metadata: ["store.outage": "\(Int(seconds)) s", "error": "\(error)"])
        })
    }

    func mine(_ job: String) -> Bool { options.onlyJob == nil || options.onlyJob == job }

    /// Runs `work` on its own thread with a store connection of its own (one a finished thread left, or a
    /// new one); failures fail the job.
    func background(_ job: String, _ work: @escaping @Sendable (any CoordinatorStore) throws -> Void) {
        let stores = self.stores, patience = storePatience
        let events = self.events, shelf = idleStores
        let timings = phaseTimings
        startThread(name: "tessera-job-\(job.prefix(8))", group: backgroundThreads) {
            do {
                let started = Stopwatch.now
                let store = try shelf.take() ?? stores.open(false, patience)
                let connecting = Stopwatch.now - started, waited = store.queryTime
                var failure: (any Error)?
                do { try work(store) } catch { failure = error }
                let querying = store.queryTime - waited
                timings.withValue { $0.database += connecting + querying }
                if let failure {
                    store.close()
                    throw failure
                }
                shelf.put(store)
            } catch {
                events.withValue { $0.append(.failed(job, "\(error)")) }
            }
        }
    }
}
