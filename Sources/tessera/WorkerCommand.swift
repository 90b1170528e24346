import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import TesseraCluster
import TesseraEngine

struct Worker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run a stateless encoder node that takes segments from a coordinator.",
        discussion: "No database, no shared filesystem. SIGTERM or Ctrl-C hands the current task back and exits.")

    @Option(help: "A coordinator's endpoint, e.g. tcp://coordinator:5555; repeat it to serve several (a name that resolves to several addresses serves each).")
    var connect: [String]
    @Option(help: "libx264 threads per encode.") var threads: Int = 1
    @Option(help: "Segments encoded at once.") var slots: Int = 1
    @Option(help: "This worker's id (default: host-pid).") var id: String?
    @Option(help: "Seconds between heartbeats.") var heartbeat: Double = 1
    /// Heartbeats without a word from the coordinator before it is taken for gone (local workers wait longer).
    @Option(help: .hidden) var liveness: Int = 3
    @Option(help: "Scheduling niceness of the encodes, 0-19 (a coordinator or job store on the same machine then never waits for a core).")
    var nice: Int32 = 0
    @OptionGroup var security: WorkerKeyOptions
    @OptionGroup var observability: ObservabilityOptions
    @Flag(name: .shortAndLong, help: "Log details to stderr.") var verbose = false
    @Option(help: .hidden) var parentProcess: Int32?
    /// Benchmark only (bench/run): skip the encode and return this many filler bytes per frame.
    @Option(name: .customLong("bench-skip-encode"), help: .hidden) var benchBytesPerFrame: Int?
    /// Tests only: damage this worker's results from the Nth on (`WorkerFault`).
    @Option(name: .customLong("fault-corrupt-from"), help: .hidden) var corruptResult: Int?
    /// Tests only: damage the signature of this worker's first N source URLs (`WorkerFault.tampered`).
    @Option(name: .customLong("fault-tamper-source-urls"), help: .hidden) var tamperSourceURLs: Int?
    /// Tests only: this worker's first N source reads expect other packets than probed (`WorkerFault.misprobed`).
    @Option(name: .customLong("fault-misprobe-sources"), help: .hidden) var misprobeSources: Int?
    /// Tests only: encode every task without its pass (`WorkerFault.passIgnored`).
    @Flag(name: .customLong("fault-ignore-passes"), help: .hidden) var ignorePasses = false

    func validate() throws {
        guard !connect.isEmpty else { throw ValidationError("give the coordinator with --connect tcp://HOST:5555 (repeat it for several)") }
        guard threads >= 1, slots >= 1 else { throw ValidationError("--threads and --slots must be at least 1") }
        guard heartbeat > 0 else { throw ValidationError("--heartbeat must be positive") }
        guard liveness >= 1 else { throw ValidationError("--liveness must be at least 1") }
        guard (0...19).contains(nice) else { throw ValidationError("--nice must be between 0 and 19") }
    }

    func run() async throws {
        observability.bootstrap()
        var keys: WorkerSecurity?
        for endpoint in connect { keys = try security.security(connect: endpoint) ?? keys }
        EngineInfo.configureLogging(verbose: verbose)
        var logger = Logger(label: "tessera.worker")
        logger.logLevel = verbose ? .debug : .info
        var options = ClusterWorker.Options(endpoint: connect[0], workerID: id ?? ClusterWorker.defaultID(), slots: slots,
                                            threads: threads, heartbeatInterval: heartbeat, parentProcess: parentProcess)
        options.liveness = liveness
        options.security = keys
        options.endpoints = connect
        options.benchBytesPerFrame = benchBytesPerFrame
        options.corruptResult = corruptResult
        options.tamperSourceURLs = tamperSourceURLs
        options.misprobeSources = misprobeSources
        options.ignorePasses = ignorePasses
        options.encodeNiceness = nice
        if benchBytesPerFrame != nil { logger.warning("benchmark mode: segments are not encoded, results are no video") }
        // /readyz answers 503 from the moment SIGTERM arrives, while the worker hands its work back.
        let worker = DrainNotingService(ClusterWorker(options: options, logger: logger))
        // The listener is listed first, so it stops last.
        let listener: (any Service)? = observability.server(.worker(options, draining: worker.draining), logger: logger)
        let services = [listener, worker].compactMap { $0 }
        do {
            // SIGTERM or SIGINT: the worker hands back what it holds and leaves.
            try await ServiceGroup(configuration: .process(services, logger: logger)).run()
        } catch {
            FileHandle.standardError.write(Data("tessera: worker: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
