import Foundation
import TesseraCore
import Logging
import ServiceLifecycle
import TesseraEngine
import ZMQKit

/// A stateless encoder node: no database, no shared filesystem. It connects to its coordinators (one or
/// several: each `--connect`, each address a name resolves to), says what it can do, encodes the tasks it
/// is sent and returns each result to the coordinator that sent the task. Its slots are shared: a task
/// beyond them, from any coordinator, is answered busy.
///
/// Heartbeats follow the ZeroMQ guide's Paranoid Pirate pattern: both sides send one every interval;
/// a coordinator silent for `liveness` intervals is taken for gone and the worker reconnects with
/// back-off up to `maximumBackoff` (in-flight encodes carry on, and their results go to the coordinator
/// at that endpoint once it answers). On
/// stop (SIGTERM) it cancels its encodes, hands the tasks back and leaves.
///
/// As a service, its loop runs on a thread of its own (libzmq blocks) until graceful shutdown or
/// cancellation; each run's state lives in a `WorkerSession` confined to that thread.
public struct ClusterWorker: Service {
    public struct Options: Sendable {
        /// The first coordinator's endpoint.
        public var endpoint: String { get { endpoints[0] } set { endpoints[0] = newValue } }
        /// Every coordinator's endpoint (at least one).
        public var endpoints: [String]
        public var workerID: String
        public var slots: Int
        public var threads: Int
        public var heartbeatInterval: Double
        public var liveness: Int
        public var maximumMessageSize: Int64
        /// Stop when the process that started this worker is gone (local workers of `tessera transcode`).
        public var parentProcess: Int32?
        /// Benchmark only, never a production path: skip decoding and encoding and return a result
        /// of this many bytes per frame that is no video (see `BenchResult`). Coordinators refuse such
        /// workers unless they are benchmarking too.
        public var benchBytesPerFrame: Int?
        /// CURVE keys: its own and the coordinator's; nil: plaintext (`ipc://`, or `--insecure`).
        public var security: WorkerSecurity?
        /// Scheduling niceness of the encode threads (0 to 19). Above 0, a coordinator and job store on
        /// the same machine get a core the moment they need one instead of queueing behind libx264.
        public var encodeNiceness: Int32 = 0
        /// Tests only, never a production path: this worker's results from the Nth on (counted from 1) are damaged
        /// under their valid lease, checksum recomputed (`WorkerFault`), as a broken or compromised host would.
        public var corruptResult: Int?
        /// Tests only: this worker's first N reads of a task's source bytes use a URL whose signature is damaged, as
        /// an expired or refused URL is refused (`WorkerFault.tampered`).
        public var tamperSourceURLs: Int?
        /// Tests only: this worker's first N reads of a task's source bytes expect a first packet one byte longer
        /// than probed, as if the probe were wrong (`WorkerFault.misprobed`).
        public var misprobeSources: Int?
        /// Tests only: this worker encodes every task without its pass (`WorkerFault.passIgnored`).
        public var ignorePasses = false

        public init(endpoint: String, workerID: String = ClusterWorker.defaultID(), slots: Int = 1, threads: Int = 1,
                    heartbeatInterval: Double = 1, liveness: Int = 3, maximumMessageSize: Int64 = 1 << 30) {
            endpoints = [endpoint]
            self.workerID = workerID
            self.slots = slots
            self.threads = threads
            self.heartbeatInterval = heartbeatInterval
            self.liveness = liveness
            self.maximumMessageSize = maximumMessageSize
        }

        public init(endpoint: String, workerID: String, slots: Int, threads: Int, heartbeatInterval: Double, parentProcess: Int32?) {
            self.init(endpoint: endpoint, workerID: workerID, slots: slots, threads: threads, heartbeatInterval: heartbeatInterval)
            self.parentProcess = parentProcess
        }
    }

    public static func defaultID() -> String {
        "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)"
    }

    public let options: Options
    public let logger: Logger

    public init(options: Options, logger: Logger = Logger(label: "tessera.worker")) {
        self.options = options
        self.logger = logger
    }

    /// The longest wait between reconnections to a silent coordinator.
    public static let maximumBackoff = 4.0
    /// How often names are resolved again, to serve coordinators that appeared behind them.
    static let resolveInterval = 30.0

    /// Works until `stop` is set, then hands back what it holds; blocking. One session per coordinator,
    /// each on a thread of its own.
    public func run(stop: CancellationFlag) throws(ZMQError) {
        let pool = SlotPool(options.slots)
        var endpoints = CoordinatorEndpoints.expand(options.endpoints)
        if endpoints.count == 1, !options.endpoints.contains(where: { CoordinatorEndpoints.hostAndPort($0) != nil }) {
            return try WorkerSession(options: options, endpoint: endpoints[0], pool: pool, logger: logger).run(stop: stop)
        }
        let sessions = DispatchGroup(), failure = Locked<ZMQError?>(nil)
        let (options, logger) = (self.options, self.logger)
        var served: Set<String> = []
        while !stop.isCancelled {
            for endpoint in endpoints where served.insert(endpoint).inserted {
                logger.info("serving a coordinator", metadata: ["coordinator": "\(endpoint)", "coordinators": "\(served.count)"])
                _ = startThread(name: "tessera-worker-\(served.count)", group: sessions) {
                    do throws(ZMQError) {
                        try WorkerSession(options: options, endpoint: endpoint, pool: pool, logger: logger).run(stop: stop)
                    } catch {
                        failure.withValue { $0 = $0 ?? error }
                        stop.cancel()
                    }
                }
            }
            let next = Date().addingTimeInterval(Self.resolveInterval)
            while !stop.isCancelled && Date() < next { Thread.sleep(forTimeInterval: 0.1) }
            if !stop.isCancelled { endpoints = CoordinatorEndpoints.expand(options.endpoints) }
        }
        sessions.wait()
        if let error = failure.current { throw error }
    }

    public func run() async throws {
        try await DedicatedThread.runUntilStopped("tessera-worker") { stop in try run(stop: stop) }
    }
}
