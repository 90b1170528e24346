import ArgumentParser
import Foundation
import Logging
import TesseraCluster
import TesseraCore
import TesseraEngine
import TesseraStore

struct Transcode: AsyncParsableCommand {
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
    @OptionGroup var overwriting: OverwriteOptions
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

    func run() async throws {
        let report = JobReport(input: input, output: output)
        try await hooks.reporting(report) { try await transcode(report) }
    }

    func transcode(_ report: JobReport) async throws {
        var logger = Logger(label: "tessera")
        logger.logLevel = verbose ? .info : .error
        EngineInfo.configureLogging(verbose: verbose)
        let progress = ProgressRenderer()
        let started = Date()

        var request: LocalTranscode.Request
        do throws(TesseraError) {
            try FilePaths.check(input: input, output: output)
            let spec = try encode.spec(segmentSeconds: planning.segmentSeconds)
            // Default: one worker process per core's worth of libx264 threads.
            let workers = planning.workers ?? max(1, ProcessInfo.processInfo.activeProcessorCount / max(1, spec.settings.threads))
            try extras.check(input: input, output: output)
            try overwriting.check([output] + (extras.thumbnail.map { [$0] } ?? []))
            request = LocalTranscode.Request(input: input, output: output, spec: spec, workers: workers,
                                             store: database.explicitURL.map { .url($0) } ?? .embedded(database.embedded),
                                             binary: Self.executablePath)
        } catch {
            throw report.fail(error)
        }
        request.benchBytesPerFrame = benchBytesPerFrame
        request.benchSlots = benchSlots
        request.storeStarting = { [database] in database.announceNewStore() }
        request.transport = benchTransport
        request.ioThreads = benchIOThreads
        if input == nil { FileHandle.standardError.write(Data("tessera: no input given, generating a 10 s sample clip\n".utf8)) }

        // The input is checked and planned before anything starts; Ctrl-C or SIGTERM cancels the job.
        let outcome: LocalTranscode.Outcome
        do {
            outcome = try await LocalTranscode(request, logger: logger).run { progress.update($0) }
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
        do throws(TesseraError) { try extras.finish(input: input, output: output) } catch { throw report.fail(error) }
        let summary = TranscodeSummary(job, plan: outcome.plan, wallSeconds: Date().timeIntervalSince(started), timings: outcome.timings)
        if json { print(CanonicalJSON.encode(summary, pretty: true)) } else {
            FileHandle.standardError.write(Data((summary.text + "\n").utf8))
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

        /// Workers count once they have been waited for, which `LocalTranscode` does before returning.
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

extension LocalTranscode.Transport: ExpressibleByArgument {}
