import ArgumentParser
import Foundation
import Logging
import TesseraCluster
import TesseraCore
import TesseraEngine
import TesseraStore

struct Transcode: ParsableCommand {
    static let configuration = CommandConfiguration(
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

    func run() throws {
        let report = JobReport(input: input, output: output)
        try hooks.reporting(report) { try transcode(report) }
    }

    func transcode(_ report: JobReport) throws {
        var logger = Logger(label: "tessera")
        logger.logLevel = verbose ? .info : .error
        EngineInfo.configureLogging(verbose: verbose)
        let progress = ProgressRenderer()
        let interrupted = CancellationFlag()
        let signals = SignalTrap([SIGINT, SIGTERM]) { interrupted.cancel() }
        defer { signals.release() }
        let started = Date()

        var sampleDirectory: URL?
        defer { if let sampleDirectory { try? FileManager.default.removeItem(at: sampleDirectory) } }
        let source: String
        let plan: JobPlan
        let spec: JobSpec
        let workers: Int
        var probeAndPlan = 0.0
        do throws(TesseraError) {
            spec = try encode.spec(segmentSeconds: planning.segmentSeconds)
            // Default: one worker process per core's worth of libx264 threads.
            workers = planning.workers ?? max(1, ProcessInfo.processInfo.activeProcessorCount / max(1, spec.settings.threads))
            try extras.check(input: input, output: output)
            if let input {
                source = input
            } else {
                let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-sample-\(UUID().uuidString)")
                try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
                sampleDirectory = dir
                source = dir.appendingPathComponent("sample.mp4").path
                FileHandle.standardError.write(Data("tessera: no input given, generating a 10 s sample clip\n".utf8))
                try SampleGenerator.generate(to: source, seconds: 10, width: 1280, height: 720)
            }
            // Everything a user can get wrong is refused here, before anything starts.
            try OutputPath.check(output, input: source)
            plan = try Stopwatch.time(&probeAndPlan) { () throws(TesseraError) in
                // The path the job records, so that the coordinator can take this probe for its own.
                try JobPlanner.plan(try MediaProbe.probe(URL(fileURLWithPath: source).standardizedFileURL.path),
                                    options: JobOptions(spec: spec, workers: workers))
            }
        } catch {
            throw report.fail(error)
        }

        var run = LocalCluster(binary: Self.executablePath, workers: workers, threads: spec.settings.threads, logger: logger)
        run.benchBytesPerFrame = benchBytesPerFrame
        run.benchSlots = max(1, benchSlots)
        run.knownProbe = plan.probe
        let outcome: LocalCluster.Outcome
        do {
            outcome = try run.transcode(input: plan.inputPath,
                                        output: URL(fileURLWithPath: output).standardizedFileURL.path, spec: spec,
                                        database: database, interrupted: interrupted, progress: progress)
        } catch {
            progress.finish()
            throw report.fail(error as? StoreError ?? StoreError("\(error)"))
        }
        progress.finish()
        report.record(outcome.job)
        var timings = outcome.timings
        // The scene analysis runs once, within the CLI's plan; the coordinator takes its result with the probe.
        timings.sceneAnalysis = plan.probe.sceneAnalysisSeconds
        timings.cliProbeAndPlan = probeAndPlan - plan.probe.sceneAnalysisSeconds
        timings.shutdown = Stopwatch.now - outcome.finishedAt
        switch outcome.job.state {
        case .done:
            do throws(TesseraError) { try extras.finish(input: input, output: output) } catch { throw report.fail(error) }
            let summary = TranscodeSummary(outcome.job, plan: plan, wallSeconds: Date().timeIntervalSince(started), timings: timings)
            if json { print(CanonicalJSON.encode(summary, pretty: true)) } else {
                FileHandle.standardError.write(Data((summary.text + "\n").utf8))
            }
        case .canceled where interrupted.isCancelled:
            FileHandle.standardError.write(Data("tessera: canceled, nothing written to \(output)\n".utf8))
            throw ExitCode(130)
        default:
            throw report.fail(TesseraError(.segment, "", outcome.job.error ?? "job \(outcome.job.state.rawValue)"))
        }
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
    /// Where the time went (see `PhaseTimings`), in seconds.
    var timings: PhaseTimings
    /// Peak resident memory of this process (the coordinator) and of the largest worker process.
    var peakRSSBytes: PeakRSS

    struct PeakRSS: Codable {
        var coordinator: Int64
        var worker: Int64

        /// Workers count once they have been waited for, which `LocalCluster` does before returning.
        static var now: PeakRSS {
            var own = rusage(), children = rusage()
            getrusage(RUSAGE_SELF.rawValue, &own)
            getrusage(RUSAGE_CHILDREN.rawValue, &children)
            return PeakRSS(coordinator: Int64(own.ru_maxrss) * 1024, worker: Int64(children.ru_maxrss) * 1024)
        }
    }

    init(_ job: JobRecord, plan: JobPlan, wallSeconds: Double, timings: PhaseTimings) {
        self.job = job.id
        output = job.output
        frames = Int64(plan.outputFrameCount)
        segments = job.segmentsTotal
        segmentFrames = plan.cuts.segments.indices.map(plan.outputFrames)
        durationSeconds = plan.cuts.durationSeconds.rounded6
        self.wallSeconds = wallSeconds.rounded6
        speed = (plan.cuts.durationSeconds / max(wallSeconds, 1e-9)).rounded6
        level = plan.settings.level ?? "auto"
        self.timings = timings
        peakRSSBytes = .now
    }

    var text: String {
        String(format: "tessera: %@: %lld frames in %d segments, %.2f s of video in %.2f s (%.2fx), level %@",
               output, frames, segments, durationSeconds, wallSeconds, speed, level)
    }
}
