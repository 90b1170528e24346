import Foundation
import Logging
import ServiceLifecycle
import TesseraCore
import TesseraEngine
import TesseraStore

/// The job of `tessera transcode` as a service: it plans the input, has the store started, queues the
/// job, hands the private coordinator and the worker pool what they need, and follows the job to its end.
/// Graceful shutdown (Ctrl-C, SIGTERM) cancels the job; it is listed last, so it shuts down first, while
/// the coordinator and the store are still there to see the cancel through.
struct LocalJobService: Service {
    enum Store: Sendable {
        case url(String)
        case embedded(EmbeddedPostgresService)
    }

    let request: LocalTranscode.Request
    let store: Store
    let coordinator: CoordinatorService
    let workers: LocalWorkerPool
    /// Files and directories to remove once every service has stopped.
    let made: Locked<[URL]>
    let logger: Logger
    let progress: @Sendable (TranscodeProgress) -> Void
    let outcome = Locked<LocalTranscode.Outcome?>(nil)

    func run() async throws {
        let interrupted = CancellationFlag()
        // Named now, so that the coordinator starts before the job is queued; and the workers start at
        // once, while the job is planned: on an ipc endpoint they connect as soon as the coordinator binds
        // it (libzmq retries meanwhile). The socket sits in a directory only this user may enter.
        let id = UUID().uuidString.lowercased()
        var socket = ""
        if request.transport == .ipc {
            let directory = try PrivateSocketDirectory.make()
            made.withValue { $0.append(directory) }
            socket = directory.appendingPathComponent("coordinator.ipc").path
            workers.join("ipc://\(socket)")
        }
        try await withTaskCancellationOrGracefulShutdownHandler {
            let outcome = try await transcode(id: id, socket: socket, interrupted: interrupted)
            self.outcome.withValue { $0 = outcome }
        } onCancelOrGracefulShutdown: {
            interrupted.cancel()
        }
    }

    /// Probes, plans, queues and follows the job.
    func transcode(id: String, socket: String, interrupted: CancellationFlag) async throws -> LocalTranscode.Outcome {
        // The input is probed while the store is asked whether it runs. When it does, starting the coordinator
        // creates nothing: it starts at once, beside the probe and the plan (its scene analysis), that
        // session becomes the job's own, and a bad input or a refused plan leaves nothing behind either.
        async let probed = DedicatedThread.run("tessera-plan") { () throws -> (ProbeResult, Double) in try probeInput() }
        var cluster: Cluster?, started = Stopwatch.now
        let session = await DedicatedThread.run("tessera-store") { runningStore() }
        let running = session != nil
        if let session {
            started = Stopwatch.now
            do { cluster = try await start(id: id, socket: socket, interrupted: interrupted, session: session) } catch {
                _ = try? await probed
                throw error
            }
        }
        let plan: JobPlan, planning: Double, probing: Double
        do {
            let probe: ProbeResult
            (probe, probing) = try await probed
            (plan, planning) = try await DedicatedThread.run("tessera-plan") { () throws -> (JobPlan, Double) in try planJob(probe) }
            request.planned?(plan)
        } catch {
            cluster?.store.close()
            throw error
        }
        if !running {
            // The store would be made or started: only for a job that can be queued.
            started = Stopwatch.now
            cluster = try await start(id: id, socket: socket, interrupted: interrupted, session: nil)
        }
        var outcome = try await queue(plan, cluster, id: id, started: started, interrupted: interrupted)
        // The scene analysis runs once, within this plan; the coordinator takes its result with the probe.
        outcome.timings.sceneAnalysis = plan.probe.sceneAnalysisSeconds
        outcome.timings.cliProbeAndPlan = probing + planning - plan.probe.sceneAnalysisSeconds
        return outcome
    }

    /// The job's own session when the embedded store already runs (starting the job's services would create
    /// nothing), its schema up to date; else nil.
    func runningStore() -> JobStore? {
        guard case .embedded(let postgres) = store else { return nil }
        return try? JobStore(answering: postgres.server, migrate: true, reconnectTimeout: 10)
    }

    /// What `start` started: the private coordinator, and this job's own store connection (opened on the
    /// starting thread, then used by the following thread alone).
    struct Cluster {
        let coordinator: Coordinator
        let store: JobStore
        /// What the workers need besides the endpoint (keys).
        var workerArguments: [String] = []
    }

    /// The store started, the private coordinator with it, and a connection of the job's own opened (the
    /// schema brought up to date), or `session` taken for it; nil when interrupted first. `session` closes
    /// on every way out until the starting thread takes it.
    func start(id: String, socket: String, interrupted: CancellationFlag, session: sending JobStore?) async throws -> sending Cluster? {
        guard !interrupted.isCancelled else {
            session?.close()
            return nil
        }
        let url: String
        switch store {
        case .url(let given): url = given
        case .embedded(let postgres):
            do { url = try await postgres.url(answering: session != nil) } catch {
                session?.close()
                throw error
            }
        }
        guard !interrupted.isCancelled else {
            session?.close()
            return nil
        }
        let cluster = try await DedicatedThread.run("tessera-job", handing: session) { (session: sending JobStore?) throws -> Cluster in
            let coordinator: Coordinator, workerArguments: [String]
            do { (coordinator, workerArguments) = try startCoordinator(id: id, url: url, socket: socket) } catch {
                session?.close()
                throw error
            }
            let store = try session ?? JobStore(url: url, migrate: true, reconnectTimeout: 10)
            do {
                try store.listen()
            } catch {
                store.close()
                throw error
            }
            return Cluster(coordinator: coordinator, store: store, workerArguments: workerArguments)
        }
        if request.transport != .ipc {
            // The port is the coordinator's to pick: the workers join once it has bound (or its run ended).
            let bound = await cluster.coordinator.bound.valueUnlessShutdown()
            workers.join(bound ?? "tcp://127.0.0.1:*", arguments: cluster.workerArguments)
        }
        return cluster
    }

    /// Queues the job and follows it; nothing is queued once interrupted.
    func queue(_ plan: JobPlan, _ cluster: sending Cluster?, id: String, started: Double,
               interrupted: CancellationFlag) async throws -> LocalTranscode.Outcome {
        guard let cluster, !interrupted.isCancelled else {
            cluster?.store.close()
            return LocalTranscode.Outcome(job: nil, plan: plan, interrupted: true, timings: PhaseTimings(), finishedAt: Stopwatch.now)
        }
        cluster.coordinator.know(plan.probe)
        return try await DedicatedThread.run("tessera-job") { () throws -> LocalTranscode.Outcome in
            defer { cluster.store.close() }
            return try follow(plan, id: id, coordinator: cluster.coordinator, store: cluster.store, started: started,
                              interrupted: interrupted)
        }
    }

    /// The input (or a generated sample) checked and probed, before anything starts; and the seconds
    /// the probe took.
    func probeInput() throws(TesseraError) -> (ProbeResult, Double) {
        let source: String
        if let input = request.input {
            source = input
        } else {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-sample-\(UUID().uuidString)")
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            made.withValue { $0.append(directory) }
            source = directory.appendingPathComponent("sample.mp4").path
            try SampleGenerator.generate(to: source, seconds: 10, width: 1280, height: 720)
        }
        try OutputPath.check(request.output, input: source, ladder: request.spec.ladder)
        if let location = S3Location(url: request.output) { try ObjectUpload.checkBucket(location) }
        var seconds = 0.0
        // The path the job records, so that the coordinator can take this probe for its own.
        let probe = try Stopwatch.time(&seconds) { () throws(TesseraError) in
            try MediaProbe.probe(InputSource.standardized(source))
        }
        return (probe, seconds)
    }

    /// The job planned from `probe`, and the seconds that took.
    func planJob(_ probe: ProbeResult) throws(TesseraError) -> (JobPlan, Double) {
        var seconds = 0.0
        let plan = try Stopwatch.time(&seconds) { () throws(TesseraError) in
            try JobPlanner.plan(probe, options: JobOptions(spec: request.spec, workers: request.workers))
        }
        return (plan, seconds)
    }

    /// The job's private coordinator, started: it takes the job once queued (`onlyJob`), with this
    /// process's probe of the input (`know`); and the arguments its workers need besides the endpoint.
    func startCoordinator(id: String, url: String, socket: String) throws(StoreError) -> (Coordinator, workerArguments: [String]) {
        // Beside the output: a streaming ladder's folder, not inside it (it is replaced whole).
        let output = request.spec.ladder?.packaging.isStreaming == true ? OutputPath.streamingFolder(of: request.output)
            : URL(fileURLWithPath: request.output).standardizedFileURL.path
        // An object's scratch is in the temporary directory: there is no folder beside it.
        let scratch = S3Location.isS3(request.output)
            ? FileManager.default.temporaryDirectory.appendingPathComponent(".tessera-\(id.prefix(8))")
            : URL(fileURLWithPath: output).deletingLastPathComponent()
                .appendingPathComponent(".\(URL(fileURLWithPath: output).lastPathComponent).tessera-\(id.prefix(8))")
        try? FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        made.withValue { $0.append(scratch) }
        let endpoint = request.transport == .ipc ? "ipc://\(socket)" : "tcp://127.0.0.1:*"

        var options = Coordinator.Options(bind: endpoint, databaseURL: url, spool: scratch.appendingPathComponent("spool"),
                                          coordinatorID: Self.coordinatorID)
        var workerArguments = request.transport == .tcp ? ["--insecure"] : []
        if request.transport == .curve {
            do {
                let coordinatorKeys = try SecurityError.generate(name: scratch.appendingPathComponent("coordinator").path)
                let workerKeys = try SecurityError.generate(name: scratch.appendingPathComponent("worker").path)
                let authorized = scratch.appendingPathComponent("authorized_workers").path
                try (workerKeys.keys.publicKey + "\n").write(toFile: authorized, atomically: true, encoding: .utf8)
                options.security = try CoordinatorSecurity(keyFile: coordinatorKeys.keyFile, authorizedKeysPath: authorized)
                workerArguments = ["--key", workerKeys.keyFile, "--coordinator-key", coordinatorKeys.publicFile]
            } catch {
                throw StoreError("CURVE keys for the benchmark: \(error)")
            }
        }
        options.onlyJob = id
        options.planningWorkers = request.workers
        options.heartbeatInterval = LocalWorkerPool.heartbeatInterval
        options.liveness = LocalWorkerPool.liveness
        options.benchmark = request.benchBytesPerFrame != nil
        options.ioThreads = request.ioThreads
        let coordinator = Coordinator(options: options, logger: logger)
        self.coordinator.assign(coordinator)
        return (coordinator, workerArguments)
    }

    /// The job names its private coordinator: another coordinator on the same store leaves it alone.
    static var coordinatorID: String { "transcode@\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier)" }

    /// Queues the job and follows it until it ends, on `store`.
    func follow(_ plan: JobPlan, id: String, coordinator: Coordinator, store: JobStore, started: Double,
                interrupted: CancellationFlag) throws(StoreError) -> LocalTranscode.Outcome {
        let output = InputSource.standardized(request.output)
        _ = try store.submit(input: plan.inputPath, output: output, spec: request.spec, coordinator: Self.coordinatorID, id: id)

        let startup = Stopwatch.now - started
        var resting = false
        var job = try store.job(id)
        var lastRead = Stopwatch.now
        var progressed = false
        while true {
            progress(TranscodeProgress(job))
            if job.state.isFinal {
                var timings = coordinator.timings
                timings.startup = startup
                timings.database += store.queryTime
                return LocalTranscode.Outcome(job: job, plan: plan, interrupted: interrupted.isCancelled, timings: timings,
                                              finishedAt: Stopwatch.now)
            }
            if interrupted.isCancelled { _ = try store.cancel(id) }
            if let error = self.coordinator.failure {
                try? store.setState(id, to: .failed, error: "coordinator: \(error)")
                job = try store.job(id)
                continue
            }
            // Every segment is in: the workers leave while the coordinator stitches, rather than after.
            // Should the stitch send a damaged segment back to encoding, they start again.
            if job.state == .stitching, !resting {
                resting = true
                workers.rest()
            } else if job.state == .encoding, resting {
                resting = false
                workers.resume()
            }
            if let failure = workers.failure { try? store.setState(id, to: .failed, error: failure) }
            // The job is read again at once when the store says its state changed; when only its
            // progress did (every segment recorded notifies), at most every 0.2 s; and every 2 s in
            // case a notification was lost.
            let sinceRead = Stopwatch.now - lastRead
            let changes = try store.waitForJobChanges(timeout: progressed ? max(0, 0.2 - sinceRead) : 0.5).filter { $0.id == id }
            progressed = progressed || !changes.isEmpty
            if changes.contains(where: { $0.state != job.state }) || (progressed && Stopwatch.now - lastRead >= 0.2)
                || Stopwatch.now - lastRead >= 2 {
                job = try store.job(id)
                lastRead = Stopwatch.now
                progressed = false
            }
        }
    }
}
