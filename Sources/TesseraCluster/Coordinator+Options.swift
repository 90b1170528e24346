import Foundation
import TesseraEngine

extension Coordinator {
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
        public var planningWorkers: Int = Options.defaultPlanningWorkers
        /// The encoders a cluster's coordinator plans a job with a segment length for (`tessera probe` says so).
        public static let defaultPlanningWorkers = 8
        public var maximumMessageSize: Int64 = 1 << 30
        /// Payload bytes the coordinator lets libzmq hold for its workers, sent but not yet on the wire:
        /// beyond it, no new task is packed until some have left (one always may when it is not full).
        /// Bounds its memory whatever the number of workers, the segments' size and the input's length:
        /// a network slower than packing gains nothing from payloads waiting in memory. Only connected
        /// workers count: what a worker found silent still holds (its host gone) stops counting then, so
        /// it cannot hold up the others; libzmq frees it when its own heartbeat closes that connection
        /// (twice the silence that ends a worker, see `run`).
        public var sendWindowBytes: Int = 16 << 20
        /// libzmq's I/O threads: they frame, and with CURVE encrypt, what the workers send and receive
        /// (a worker's connection stays on one).
        public var ioThreads = 1
        /// CURVE keys and the authorized worker keys; nil: plaintext, anyone who reaches the endpoint may
        /// join (an `ipc://` endpoint in a private directory, or `--insecure`).
        public var security: CoordinatorSecurity?
        /// A coordinator silent this long in the store loses its jobs (those not pinned to it) to a live one.
        public var takeoverAfter: Double = 15
        /// Seconds a job may wait on a local fault (spool or output disk full) before it fails.
        public var faultLimit: Double = 600
        /// Permission bits of outputs whose job names none (`coordinator --output-mode`); nil: the umask's.
        public var outputMode: Int?
        /// Only this job (the private coordinator of `tessera transcode`); nil: every job.
        public var onlyJob: String?
        /// Benchmark only: give work to workers that skip the encode (`--bench-skip-encode`), whose
        /// results are no video. Otherwise such workers get nothing.
        public var benchmark = false
        /// The share of results encoded again by a worker with another key and compared (`AuditBook`), for jobs
        /// that set none: 0 off, 1 every result. Each new key's first results are audited whenever it is above 0.
        public var auditRate = 0.0
        /// Seconds an audit waits with no worker of another key connected before the job goes on without it.
        public var auditWait = 5.0
        /// Seconds after its submission past which a job leases before the jobs of its priority with less
        /// work left (`LeaseOrder`): the bound on how long small jobs may keep a large one waiting.
        public var maxWait = LeaseOrder.defaultMaxWait

        public init(bind: String, databaseURL: String, spool: URL, coordinatorID: String = "coordinator-\(ProcessInfo.processInfo.processIdentifier)") {
            self.bind = bind
            self.databaseURL = databaseURL
            self.spool = spool
            self.coordinatorID = coordinatorID
        }
    }

    /// The part of the options the state machine decides with.
    var machineConfiguration: CoordinatorStateMachine.Configuration {
        var configuration = CoordinatorStateMachine.Configuration()
        configuration.heartbeatInterval = options.heartbeatInterval
        configuration.liveness = options.liveness
        configuration.leaseSeconds = options.leaseSeconds
        configuration.sendWindowBytes = options.sendWindowBytes
        configuration.benchmark = options.benchmark
        configuration.takeoverAfter = options.takeoverAfter
        configuration.maxWait = options.maxWait
        // A coordinator for one job (`tessera transcode`) takes over no one else's.
        configuration.adoptsOrphans = options.onlyJob == nil
        return configuration
    }
}
