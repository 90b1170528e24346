import Foundation
import Logging
import TesseraCluster
import TesseraCore
import TesseraEngine
import TesseraStore

/// The cluster on one machine, for `tessera transcode`: the job store, a private coordinator (on an
/// ipc:// endpoint, for this job only) on a thread of this process, and worker processes. Everything
/// it starts it stops, on Ctrl-C too; the job's state stays in the store.
struct LocalCluster {
    let binary: String
    let workers: Int
    let threads: Int
    let logger: Logger
    /// Benchmark only: workers skip the encode and return this many filler bytes per frame.
    var benchBytesPerFrame: Int?
    /// Benchmark only: tasks each benchmark worker takes at once.
    var benchSlots = 1
    /// The input's probe, which the coordinator plans from instead of reading the file again.
    var knownProbe: ProbeResult?

    struct Outcome {
        var job: JobRecord
        /// The coordinator's phases, with this process's start-up and its waits on the store.
        var timings: PhaseTimings
        /// When the job reached its final state (`Stopwatch` seconds); stopping the processes comes after.
        var finishedAt: Double
    }

    func transcode(input: String, output: String, spec: JobSpec, database: DatabaseOptions, interrupted: CancellationFlag,
                   progress: ProgressRenderer) throws -> Outcome {
        let started = Stopwatch.now
        let url = try database.resolveURL()
        let store = try JobStore(url: url, migrate: true, reconnectTimeout: 10)
        defer { store.close() }
        try store.listen()
        let id = try store.submit(input: input, output: output, spec: spec)

        let scratch = URL(fileURLWithPath: output).deletingLastPathComponent()
            .appendingPathComponent(".\(URL(fileURLWithPath: output).lastPathComponent).tessera-\(id.prefix(8))")
        try? FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        // ipc paths are limited to ~100 bytes: keep the socket in /tmp.
        let endpoint = "ipc:///tmp/tessera-\(ProcessInfo.processInfo.processIdentifier)-\(id.prefix(8)).ipc"

        var options = Coordinator.Options(bind: endpoint, databaseURL: url, spool: scratch.appendingPathComponent("spool"))
        options.onlyJob = id
        options.planningWorkers = workers
        options.heartbeatInterval = 0.5
        options.benchmark = benchBytesPerFrame != nil
        options.knownProbe = knownProbe
        let coordinatorStop = CancellationFlag()
        let coordinatorError = Locked<String?>(nil)
        let coordinator = Coordinator(options: options, logger: logger)
        let coordinatorDone = startThread(name: "tessera-coordinator") {
            do { try coordinator.run(stop: coordinatorStop) } catch { coordinatorError.withValue { $0 = "\(error)" } }
        }

        var processes: [Process] = []
        func startWorker(_ n: Int) -> Process? {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["worker", "--connect", endpoint, "--id", "local-\(ProcessInfo.processInfo.processIdentifier)-\(n)",
                                 "--threads", String(threads), "--heartbeat", "0.5", "--nice", String(Self.encodeNiceness),
                                 "--parent-process", String(ProcessInfo.processInfo.processIdentifier)]
                + (benchBytesPerFrame.map { ["--bench-skip-encode", String($0), "--slots", String(benchSlots)] } ?? [])
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do { try process.run() } catch { return nil }
            return process
        }
        for n in 0..<workers { if let p = startWorker(n) { processes.append(p) } }
        defer {
            for p in processes where p.isRunning { p.terminate() }
            for p in processes { p.waitUntilExit() }
            coordinatorStop.cancel()
            coordinatorDone.wait()
            try? FileManager.default.removeItem(atPath: String(endpoint.dropFirst("ipc://".count)))
        }

        let startup = Stopwatch.now - started
        var restarts = 0
        var resting = false
        var job = try store.job(id)
        var lastRead = Stopwatch.now
        var progressed = false
        while true {
            progress.update(TranscodeProgress(phase: Self.phase(job.state), segmentsDone: job.segmentsDone, segmentsTotal: job.segmentsTotal,
                                              framesDone: Int(job.framesDone), framesTotal: Int(job.framesTotal)))
            if job.state.isFinal {
                var timings = coordinator.timings
                timings.startup = startup
                timings.database += store.queryTime
                return Outcome(job: job, timings: timings, finishedAt: Stopwatch.now)
            }
            if interrupted.isCancelled { try store.cancel(id) }
            if let error = coordinatorError.current {
                try? store.setState(id, to: .failed, error: "coordinator: \(error)")
                job = try store.job(id)
                continue
            }
            // Every segment is in: the workers leave while the coordinator stitches, rather than after.
            // Should the stitch send a damaged segment back to encoding, they start again.
            if job.state == .stitching, !resting {
                resting = true
                for p in processes where p.isRunning { p.terminate() }
            } else if job.state == .encoding, resting {
                resting = false
                for p in processes { p.waitUntilExit() }
                for n in processes.indices { if let replacement = startWorker(n) { processes[n] = replacement } }
            }
            // A worker process that died is replaced (its leases come back through the heartbeats).
            for (n, p) in processes.enumerated() where !resting && !p.isRunning && restarts < 3 * workers {
                restarts += 1
                if let replacement = startWorker(n) { processes[n] = replacement }
            }
            if processes.isEmpty || (!resting && restarts >= 3 * workers && processes.allSatisfy({ !$0.isRunning })) {
                try? store.setState(id, to: .failed, error: "no worker process could run (\(binary))")
            }
            // The job is read again at once when the store says its state changed; when only its
            // progress did (every segment recorded notifies), at most every 0.2 s; and every 2 s in
            // case a notification was lost. The processes are looked after every 0.5 s.
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

    /// The local workers' encodes run a little nicer than this process and the job store, which share
    /// the machine's cores with them: the coordinator's turns and the store's answers do not queue
    /// behind libx264 (the encodes lose nothing when nothing else wants a core).
    static let encodeNiceness = 5

    static func phase(_ state: JobState) -> TranscodeProgress.Phase {
        switch state {
        case .queued: return .queued
        case .planning: return .planning
        case .encoding: return .encoding
        case .stitching: return .stitching
        case .done: return .done
        case .failed: return .failed
        case .canceled: return .canceled
        }
    }
}
