import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import TesseraCluster
import TesseraCore
import TesseraEngine
import TesseraStore

struct CoordinatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coordinator",
        abstract: "Plan queued jobs, dispatch their segments to workers over ZeroMQ, stitch the results.",
        discussion: "State lives in PostgreSQL: a coordinator killed and restarted resumes its jobs. SIGTERM stops it.")

    @Option(help: "ZeroMQ endpoint workers connect to.") var bind: String = "tcp://*:5555"
    @Option(help: "Directory for encoded segments between encode and stitch (default: the state directory's spool).")
    var spool: String?
    @Option(help: "Seconds between heartbeats.") var heartbeat: Double = 1
    /// Heartbeats a worker may miss before it is taken for silent and its leases return (tests on a loaded machine wait longer).
    @Option(help: .hidden) var liveness: Int = 3
    @Option(help: "Failed attempts after which a segment fails its job.") var attempts: Int = 3
    @Option(help: "Largest message accepted from a worker, in bytes; larger frames are refused.")
    var maxMessageSize: Int64 = 1 << 30
    @Option(help: "Megabytes of task payloads sent to connected workers but not yet on the wire at most; no new task is packed beyond it.")
    var sendWindow: Double = 16
    @Option(help: "libzmq I/O threads: they frame, and with CURVE encrypt, the workers' traffic; more than 1 when encryption keeps one core busy.")
    var ioThreads: Int = 1
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var security: CoordinatorKeyOptions
    @Option(help: "This coordinator's id; keep it across restarts so it takes back its jobs (default: host and bind).")
    var id: String?
    @Option(help: "Seconds a coordinator may be silent in the store before a live one takes over its jobs.")
    var takeoverAfter: Double = 15
    @Option(help: "Seconds a job may wait on a local fault (spool or output disk full, unwritable) before it fails.")
    var faultLimit: Double = 600
    @Option(help: ArgumentHelp("Share of segments encoded again by a worker with another key and compared before the stitch: 0 off, 1 every segment; each new key's first 3 results are audited when above 0 (a job's `submit --audit` overrides it).", valueName: "rate"))
    var audit: Double = 0.05
    @Option(help: "Seconds an audit waits with no worker of another key connected before its job goes on unaudited.")
    var auditWait: Double = 5
    @Option(help: ArgumentHelp("How long a job may wait after its submission before it is served ahead of the jobs of its priority with less work left (seconds, 500ms, 10m, 1h or HH:MM:SS).", valueName: "duration"))
    var maxWait: String = "10m"
    @OptionGroup var observability: ObservabilityOptions
    @OptionGroup var permissions: OutputModeOptions
    @Flag(name: .shortAndLong, help: "Log details to stderr.") var verbose = false

    func validate() throws {
        guard DurationText.seconds(maxWait) != nil else {
            throw ValidationError("--max-wait must be a duration: seconds, 500ms, 10m, 1h or HH:MM:SS")
        }
    }

    func run() async throws {
        observability.bootstrap()
        EngineInfo.configureLogging(verbose: verbose)
        var logger = Logger(label: "tessera.coordinator")
        logger.logLevel = verbose ? .debug : .info
        let keys = try security.security(bind: bind)
        let url: String
        do throws(StoreError) {
            url = try database.resolveURL(announcing: true)
        } catch {
            throw Tessera.fail(error)
        }
        let spoolURL = spool.map { URL(fileURLWithPath: $0) }
            ?? (database.dataDir.map { URL(fileURLWithPath: $0) } ?? EmbeddedPostgres.defaultDirectory()).appendingPathComponent("spool")
        // Stable across restarts on this host, so a restarted coordinator takes back its own jobs.
        var options = Coordinator.Options(bind: bind, databaseURL: url, spool: spoolURL,
                                          coordinatorID: id ?? "coordinator@\(ProcessInfo.processInfo.hostName):\(bind)")
        options.security = keys
        guard (1...64).contains(ioThreads) else { throw ValidationError("--io-threads must be between 1 and 64") }
        options.ioThreads = ioThreads
        options.heartbeatInterval = heartbeat
        guard liveness >= 1 else { throw ValidationError("--liveness must be at least 1") }
        options.liveness = liveness
        options.attemptLimit = attempts
        options.maximumMessageSize = maxMessageSize
        guard sendWindow > 0, sendWindow <= 1_048_576 else { throw ValidationError("--send-window must be above 0 and at most 1048576 megabytes") }
        options.sendWindowBytes = max(1, Int(sendWindow * 1_048_576))
        guard takeoverAfter >= 2 * heartbeat else { throw ValidationError("--takeover-after must be at least twice --heartbeat") }
        options.takeoverAfter = takeoverAfter
        guard faultLimit > 0 else { throw ValidationError("--fault-limit must be positive") }
        options.faultLimit = faultLimit
        options.outputMode = permissions.bits
        guard (0...1).contains(audit) else { throw ValidationError("--audit is a share between 0 and 1") }
        guard auditWait >= 0 else { throw ValidationError("--audit-wait must not be negative") }
        options.auditRate = audit
        options.auditWait = auditWait
        if let seconds = DurationText.seconds(maxWait) { options.maxWait = seconds }
        let coordinator = Coordinator(options: options, logger: logger)
        // The listener is listed first, so it stops last: it answers while the coordinator winds down.
        let listener: (any Service)? = observability.server(.coordinator(coordinator), logger: logger)
        let services = [listener, CoordinatorService(coordinator)].compactMap { $0 }
        do {
            // SIGTERM or SIGINT: the loop finishes its turn, planning and stitching threads end, and it returns.
            try await ServiceGroup(configuration: .process(services, logger: logger)).run()
        } catch {
            FileHandle.standardError.write(Data("tessera: coordinator: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
