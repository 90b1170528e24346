import ArgumentParser
import Foundation
import Logging
import TesseraCluster
import TesseraCore
import TesseraEngine
import TesseraStore

struct Transcode: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transcode",
        abstract: "Transcode INPUT to a faststart H.264/AAC MP4, segment-parallel and frame-exact.",
        discussion: """
            Runs the cluster on this machine: the job store (embedded PostgreSQL unless --database-url), a private \
            coordinator and --workers local worker processes. Without INPUT, a 10 s sample clip is generated and \
            transcoded. Exits 0 only once the output is verified; Ctrl-C cancels the job and cleans up.
            """)

    @Argument(help: "The input file (omit to generate a sample clip).") var input: String?
    @Option(name: .shortAndLong, help: "The output MP4.") var output: String
    @OptionGroup var encode: EncodeOptions
    @OptionGroup var planning: PlanningOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var extras: OutputExtrasOptions
    @OptionGroup var hooks: HookOptions
    @OptionGroup var overwriting: OverwriteOptions
    @OptionGroup var permissions: OutputModeOptions
    @Flag(name: .shortAndLong, help: "Log details (and FFmpeg's messages) to stderr.") var verbose = false
    @Flag(help: "Print the result as JSON on stdout.") var json = false
    /// Benchmark only (bench/run): the workers skip the encode and return this many filler bytes per
    /// frame, so the output is no video. Measures the coordinator alone.
    @Option(name: .customLong("bench-skip-encode"), help: .hidden) var benchBytesPerFrame: Int?
    /// Benchmark only: tasks each benchmark worker takes at once. A worker that skips the encode sends
    /// its result back at once and waits for the next task, so a few of them leave the coordinator idle
    /// between round trips; taking several tasks each, they keep as many in flight as a cluster of
    /// that many real workers, which encode for seconds, would.
    @Option(name: .customLong("bench-slots"), help: .hidden) var benchSlots: Int = 1
    /// Benchmark only: the private cluster's transport, `ipc` (as always), `tcp` (loopback, plaintext) or
    /// `curve` (loopback, CURVE keys made for the run), to measure what encryption costs the coordinator.
    @Option(name: .customLong("bench-transport"), help: .hidden) var benchTransport: LocalTranscode.Transport = .ipc
    /// Benchmark only: the private coordinator's libzmq I/O threads.
    @Option(name: .customLong("bench-io-threads"), help: .hidden) var benchIOThreads: Int = 1

    /// The options checked against the output (a ladder's packaging) before anything starts.
    func validate() throws {
        _ = try encode.spec(segmentSeconds: planning.segmentSeconds, output: output)
    }

    func run() async throws {
        let report = JobReport(input: input, output: output)
        try await hooks.reporting(report) { try await transcode(report) }
    }

    func transcode(_ report: JobReport) async throws {
        var logger = Logger(label: "tessera")
        logger.logLevel = verbose ? .info : .error
        EngineInfo.configureLogging(verbose: verbose)
        let progress = ProgressRenderer()

        var request: LocalTranscode.Request
        do throws(TesseraError) {
            try FilePaths.check(input: input, output: output)
            var spec = try encode.spec(segmentSeconds: planning.segmentSeconds, output: output)
            spec.outputMode = permissions.bits
            let workers = workerCount(threads: spec.settings.threads)
            if spec.ladder != nil, extras.thumbnail != nil { throw TesseraError(.settings, "--thumbnail", "is not made for a --ladder job") }
            try extras.check(input: input, output: output)
            try OutputPath.checkNaming(output, input: input, ladder: spec.ladder)
            try overwriting.check(spec.writtenPaths(for: output) + (extras.thumbnail.map { [$0] } ?? []))
            try overwriting.check(folders: spec.replacedFolders(for: output))
            request = LocalTranscode.Request(input: input, output: output, spec: spec, workers: workers,
                                             store: database.explicitURL.map { .url($0) } ?? .embedded(database.embedded),
                                             binary: Self.executablePath)
        } catch {
            throw report.fail(error)
        }
        // The sample clip and the store's start are timed apart: the result line times the transcode.
        var setup = TranscodeSummary.Setup()
        let sample = input == nil ? FileManager.default.temporaryDirectory.appendingPathComponent("tessera-sample-\(UUID().uuidString)") : nil
        defer { if let sample { try? FileManager.default.removeItem(at: sample) } }
        if let sample {
            let started = Date()
            let clip = sample.appendingPathComponent("sample.mp4").path
            do {
                try FileManager.default.createDirectory(at: sample, withIntermediateDirectories: true)
            } catch {
                throw report.fail(TesseraError(.input, sample.path, "cannot make the sample clip's directory (\(error.localizedDescription))"))
            }
            do throws(TesseraError) { try SampleGenerator.generate(to: clip, seconds: 10, width: 1280, height: 720) } catch {
                throw report.fail(error)
            }
            request.input = clip
            setup.sampleSeconds = Date().timeIntervalSince(started).rounded6
            FileHandle.standardError.write(Data(String(format: "tessera: no input given: generated a 10 s sample clip in %.2f s\n",
                                                       setup.sampleSeconds).utf8))
        }
        request.benchBytesPerFrame = benchBytesPerFrame
        request.benchSlots = benchSlots
        request.transport = benchTransport
        request.ioThreads = benchIOThreads
        // Rungs above the source are dropped, and HDR made 8-bit, each said in one line as soon as the plan is made.
        request.planned = { plan in
            for notice in [plan.ladder?.resolved.notice, plan.hdrNotice].compactMap({ $0 }) {
                FileHandle.standardError.write(Data("tessera: \(notice)\n".utf8))
            }
        }
        // A store this run starts is timed from its start to the job being queued (the first progress).
        let storeStart = Locked<Date?>(nil)
        if database.explicitURL == nil {
            request.storeStarting = { [database] in
                database.announceNewStore()
                storeStart.withValue { $0 = Date() }
            }
        }
        let started = Date()
        let storeSeconds = Locked<Double>(0)

        // The input is checked and planned before anything starts; Ctrl-C or SIGTERM cancels the job.
        let outcome: LocalTranscode.Outcome
        do {
            outcome = try await LocalTranscode(request, logger: logger).run { update in
                if let since = storeStart.withValue({ value in defer { value = nil }; return value }) {
                    let seconds = Date().timeIntervalSince(since)
                    storeSeconds.withValue { $0 = seconds }
                    FileHandle.standardError.write(Data(String(format: "tessera: started the job store in %.2f s\n", seconds).utf8))
                }
                progress.update(update)
            }
        } catch let error as TesseraError {
            progress.finish()
            throw report.fail(error)
        } catch {
            progress.finish()
            throw report.fail(error as? StoreError ?? StoreError("\(error)"))
        }
        progress.finish()
        if let job = outcome.job { report.record(job) } else { report.state = .canceled }
        guard let job = outcome.job, job.state != .canceled || !outcome.interrupted else {
            FileHandle.standardError.write(Data("tessera: canceled, nothing written to \(output)\n".utf8))
            throw ExitCode(130)
        }
        guard job.state == .done else { throw report.fail(TesseraError(.segment, "", job.error ?? "job \(job.state.rawValue)")) }
        do throws(TesseraError) { try extras.finish(input: input, output: outcome.plan.writtenFirst(for: output)) } catch {
            throw report.fail(error)
        }
        setup.storeStartSeconds = storeSeconds.withValue { $0 }.rounded6
        setup.forkedWorkers = WorkerPrefork.handedOut
        let summary = TranscodeSummary(job, plan: outcome.plan, wallSeconds: Date().timeIntervalSince(started) - setup.storeStartSeconds,
                                       timings: outcome.timings, setup: setup)
        // Every key written, `null` when unset (`rungs` of a single output).
        if json { print(CanonicalJSON.encode(NullFilled(summary), pretty: true)) } else {
            FileHandle.standardError.write(Data((summary.text + "\n").utf8))
        }
    }

    /// The worker processes this run starts: `--workers`, or one per core's worth of libx264 threads.
    func workerCount(threads: Int) -> Int {
        planning.workers ?? max(1, ProcessInfo.processInfo.activeProcessorCount / max(1, threads))
    }

    /// The worker processes to fork before the run (`WorkerPrefork`): none when the settings are refused.
    var workersToFork: Int {
        guard let spec = try? encode.spec(segmentSeconds: planning.segmentSeconds, output: output) else { return 0 }
        return workerCount(threads: spec.settings.threads)
    }

    /// This binary, to start the worker processes.
    static var executablePath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}

struct TranscodeSummary: Codable {
    var job: String
    var output: String
    var frames: Int64
    var segments: Int
    /// Output frames of each segment, in order.
    var segmentFrames: [Int]
    var durationSeconds: Double
    var wallSeconds: Double
    var speed: Double
    var level: String
    /// A ladder job's rungs as made (`720p`), after those above the source were dropped; nil for one output.
    var rungs: [String]?
    /// Seconds spent before the transcode, not counted in `wallSeconds`.
    var setup: Setup
    /// Where the time went (see `PhaseTimings`), in seconds.
    var timings: PhaseTimings
    /// Peak resident memory of this process (the coordinator) and of the largest worker process.
    var peakRSSBytes: PeakRSS

    struct Setup: Codable {
        /// Generating the sample clip (no INPUT).
        var sampleSeconds = 0.0
        /// Starting the embedded job store, when this run started it.
        var storeStartSeconds = 0.0
        /// Worker processes forked before the run started a thread, rather than started afresh.
        var forkedWorkers = 0
    }

    struct PeakRSS: Codable {
        var coordinator: Int64
        var worker: Int64

        /// Workers count once they have been waited for, which `LocalTranscode` does before returning.
        static var now: PeakRSS {
            var own = rusage(), children = rusage()
            getrusage(RUSAGE_SELF.rawValue, &own)
            getrusage(RUSAGE_CHILDREN.rawValue, &children)
            return PeakRSS(coordinator: Int64(own.ru_maxrss) * 1024, worker: Int64(children.ru_maxrss) * 1024)
        }
    }

    init(_ job: JobRecord, plan: JobPlan, wallSeconds: Double, timings: PhaseTimings, setup: Setup) {
        self.job = job.id
        output = job.output
        frames = Int64(plan.outputFrameCount)
        segments = job.segmentsTotal
        segmentFrames = plan.cuts.segments.indices.map(plan.outputFrames)
        durationSeconds = plan.cuts.durationSeconds.rounded6
        self.wallSeconds = wallSeconds.rounded6
        speed = (plan.cuts.durationSeconds / max(wallSeconds, 1e-9)).rounded6
        level = plan.settings.level ?? "auto"
        rungs = plan.ladder?.resolved.rungs.map(\.name)
        self.timings = timings
        self.setup = setup
        peakRSSBytes = .now
    }

    var text: String {
        String(format: "tessera: %@: %lld frames in %d segments, %.2f s of video in %.2f s (%.2fx), level %@",
               output, frames, segments, durationSeconds, wallSeconds, speed, level)
    }
}

extension LocalTranscode.Transport: ExpressibleByArgument {}
