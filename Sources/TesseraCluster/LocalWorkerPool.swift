import Dispatch
import Foundation
import ServiceLifecycle
import TesseraCore
import TesseraEngine

/// The worker processes of `tessera transcode`: `count` processes of this binary, started once the job
/// hands over its coordinator's endpoint (`join`). One that dies is replaced (its leases come back through
/// the heartbeats), at most 3 × `count` times in all; they leave while the job is stitched (`rest`) and
/// come back should it return to encoding (`resume`). Shutdown terminates them and waits for every one.
public struct LocalWorkerPool: Service {
    public struct Options: Sendable {
        /// This program, run as `tessera worker`.
        public var binary: String
        public var count: Int
        /// libx264 threads per encode.
        public var threads: Int
        /// Benchmark only: workers skip the encode and return this many filler bytes per frame.
        public var benchBytesPerFrame: Int?
        /// Benchmark only: tasks each benchmark worker takes at once.
        public var benchSlots = 1

        public init(binary: String, count: Int, threads: Int) {
            self.binary = binary
            self.count = count
            self.threads = threads
        }
    }

    /// The local workers' encodes run a little nicer than this process and the job store, which share
    /// the machine's cores with them: the coordinator's turns and the store's answers do not queue
    /// behind libx264 (the encodes lose nothing when nothing else wants a core).
    public static let encodeNiceness = 5

    /// Local workers and their coordinator hear from each other every half second, and take each other for
    /// gone after 10 silent intervals. A worker that dies is seen sooner (the pool starts it again and it
    /// rejoins, handing back what it no longer holds), so silence only has to catch a hung one; on a busy
    /// machine a process can wait seconds for a core, and a false silence costs the segment an attempt.
    public static let heartbeatInterval = 0.5, liveness = 10

    public let options: Options
    let endpoint = Handoff<(String, [String])>()
    let control = Control()

    public init(options: Options) {
        self.options = options
    }

    /// Starts the workers, connected to `endpoint`, with these more arguments (keys) each.
    func join(_ endpoint: String, arguments: [String] = []) { self.endpoint.hand((endpoint, arguments)) }

    /// Sends the workers away (SIGTERM: they hand back what they hold).
    func rest() { control.update { $0.resting = true } }

    /// Brings the workers back after `rest`.
    func resume() { control.update { $0.resting = false } }

    /// Set once no worker process could run.
    var failure: String? { control.state.current.failure }

    public func run() async {
        guard let (endpoint, arguments) = await endpoint.valueUnlessShutdown() else { return }
        let control = control
        await withTaskCancellationOrGracefulShutdownHandler {
            await DedicatedThread.run("tessera-workers") { supervise(endpoint, arguments) }
        } onCancelOrGracefulShutdown: {
            control.update { $0.stopping = true }
        }
    }

    /// Looks after the processes until told to stop, then stops them; every `Process` stays on this thread.
    func supervise(_ endpoint: String, _ arguments: [String]) {
        let parent = ProcessInfo.processInfo.processIdentifier
        func start(_ n: Int) -> ChildProcess? {
            let arguments = ["worker", "--connect", endpoint, "--id", "local-\(parent)-\(n)", "--threads", String(options.threads),
                             "--heartbeat", String(Self.heartbeatInterval),
                             "--liveness", String(Self.liveness), "--nice", String(Self.encodeNiceness), "--parent-process", String(parent)]
                + (options.benchBytesPerFrame.map { ["--bench-skip-encode", String($0), "--slots", String(options.benchSlots)] } ?? []) + arguments
            return WorkerPrefork.take(handing: arguments) ?? (try? ChildProcess(options.binary, arguments))
        }
        var processes: [ChildProcess] = []
        for n in 0..<options.count { if let p = start(n) { processes.append(p) } }
        defer {
            for p in processes where p.isRunning { p.terminate() }
            for p in processes { p.waitUntilExit() }
        }
        var restarts = 0
        var resting = false
        while true {
            let wanted = control.state.current
            if wanted.stopping { return }
            if wanted.resting, !resting {
                resting = true
                for p in processes where p.isRunning { p.terminate() }
            } else if !wanted.resting, resting {
                resting = false
                for p in processes { p.waitUntilExit() }
                for n in processes.indices { if let replacement = start(n) { processes[n] = replacement } }
            }
            for (n, p) in processes.enumerated() where !resting && !p.isRunning && restarts < 3 * options.count {
                restarts += 1
                if let replacement = start(n) { processes[n] = replacement }
            }
            if wanted.failure == nil,
               processes.isEmpty || (!resting && restarts >= 3 * options.count && processes.allSatisfy({ !$0.isRunning })) {
                control.state.withValue { $0.failure = "no worker process could run (\(options.binary))" }
            }
            control.wait(seconds: 0.5)
        }
    }

    /// What the job asks of the pool and what the pool tells it; the supervising thread waits on it.
    final class Control: Sendable {
        struct State {
            var resting = false
            var stopping = false
            var failure: String?
        }

        let state = Locked(State())
        private let wakeup = DispatchSemaphore(value: 0)

        /// Changes what is asked and wakes the supervisor.
        func update(_ change: (inout State) -> Void) {
            state.withValue(change)
            wakeup.signal()
        }

        func wait(seconds: Double) {
            _ = wakeup.wait(timeout: .now() + seconds)
        }
    }
}
