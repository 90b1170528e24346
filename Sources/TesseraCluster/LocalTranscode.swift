import Foundation
import Logging
import ServiceLifecycle
import TesseraCore
import TesseraEngine
import TesseraStore

/// `tessera transcode`: the whole cluster on this machine, for one job. The job store (the embedded
/// PostgreSQL unless given a URL), a private coordinator on an ipc:// endpoint, the local worker processes
/// and the job itself are services of one group, started together; the job hands the others what they
/// need as it gets it. Ctrl-C or SIGTERM cancels the job; when the job ends, the others stop, the last
/// listed first, and whatever the run made (sample clip, spool, socket) is removed.
public struct LocalTranscode: Sendable {
    public enum Store: Sendable {
        case url(String)
        /// Started once the job is ready to be queued, and left running (`tessera db stop` stops it).
        case embedded(EmbeddedPostgres)
    }

    /// How the private coordinator and its workers talk: a socket in a private directory, or (benchmarks)
    /// loopback TCP in plaintext or with CURVE keys made for the run.
    public enum Transport: String, Sendable, CaseIterable {
        case ipc, tcp, curve
    }

    public struct Request: Sendable {
        /// nil: a 10 s 720p sample clip is generated and transcoded.
        public var input: String?
        public var output: String
        public var spec: JobSpec
        /// Local worker processes, and the encoders the plan is balanced for.
        public var workers: Int
        public var store: Store
        /// This program, run as `tessera worker` for the local workers.
        public var binary: String
        /// Benchmark only: workers skip the encode and return this many filler bytes per frame.
        public var benchBytesPerFrame: Int?
        /// Benchmark only: tasks each benchmark worker takes at once.
        public var benchSlots = 1
        public var transport = Transport.ipc
        /// Called when the embedded store is about to start (the job is ready to be queued).
        public var storeStarting: (@Sendable () -> Void)?
        /// Called with the job's plan once it is made, before the job is queued (a ladder's dropped rungs).
        public var planned: (@Sendable (JobPlan) -> Void)?
        /// The private coordinator's libzmq I/O threads.
        public var ioThreads = 1

        public init(input: String?, output: String, spec: JobSpec, workers: Int, store: Store, binary: String) {
            self.input = input
            self.output = output
            self.spec = spec
            self.workers = workers
            self.store = store
            self.binary = binary
        }
    }

    public struct Outcome: Sendable {
        /// The job at its end; nil when Ctrl-C or SIGTERM came before it was queued.
        public var job: JobRecord?
        public var plan: JobPlan
        /// Ctrl-C or SIGTERM asked for the job to be canceled.
        public var interrupted: Bool
        /// The coordinator's phases, with this process's planning, start-up, waits on the store and shutdown.
        public var timings: PhaseTimings
        /// When the job reached its final state (`Stopwatch` seconds); stopping the services comes after.
        var finishedAt: Double
    }

    public let request: Request
    public let logger: Logger

    public init(_ request: Request, logger: Logger) {
        self.request = request
        self.logger = logger
    }

    /// Runs the job to its end; `progress` hears of every change. Returns once every service has stopped
    /// (the worker processes have been waited for).
    public func run(progress: @escaping @Sendable (TranscodeProgress) -> Void) async throws -> Outcome {
        let made = Locked<[URL]>([])
        func removeMade() {
            let urls = made.withValue { urls in
                defer { urls.removeAll() }
                return urls
            }
            for url in urls { try? FileManager.default.removeItem(at: url) }
        }
        defer { removeMade() }
        let store: LocalJobService.Store
        switch request.store {
        case .url(let url): store = .url(url)
        case .embedded(let server): store = .embedded(EmbeddedPostgresService(server: server, starting: request.storeStarting))
        }
        var pool = LocalWorkerPool.Options(binary: request.binary, count: request.workers, threads: request.spec.settings.threads)
        pool.benchBytesPerFrame = request.benchBytesPerFrame
        pool.benchSlots = max(1, request.benchSlots)
        let job = LocalJobService(request: request, store: store, coordinator: CoordinatorService(),
                                  workers: LocalWorkerPool(options: pool), made: made, logger: logger, progress: progress)

        // The job decides: the others' ending or failing is its to report (a coordinator that fails fails
        // the job), and the group ends when the job has.
        func helper(_ service: any Service) -> ServiceGroupConfiguration.ServiceConfiguration {
            .init(service: service, successTerminationBehavior: .ignore, failureTerminationBehavior: .ignore)
        }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if case .embedded(let postgres) = store { services.append(helper(postgres)) }
        services += [helper(job.coordinator), helper(job.workers),
                     .init(service: job, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup)]
        try await ServiceGroup(configuration: .process(services, logger: logger)).run()
        removeMade()

        guard var outcome = job.outcome.current else { throw StoreError("the transcode stopped before its job ended") }
        outcome.timings.shutdown = Stopwatch.now - outcome.finishedAt
        return outcome
    }
}
