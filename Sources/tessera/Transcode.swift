import ArgumentParser
import Foundation
import Logging
import TesseraCore
import TesseraEngine

struct Transcode: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Transcode INPUT to a faststart H.264/AAC MP4, segment-parallel and frame-exact.",
        discussion: "Without INPUT, a 10 s sample clip is generated and transcoded. Exits 0 only once the output is verified.")

    @Argument(help: "The input file (omit to generate a sample clip).") var input: String?
    @Option(name: .shortAndLong, help: "The output MP4.") var output: String
    @OptionGroup var encode: EncodeOptions
    @OptionGroup var planning: PlanningOptions
    @Flag(name: .shortAndLong, help: "Log details (and FFmpeg's messages) to stderr.") var verbose = false
    @Flag(help: "Print the result as JSON on stdout.") var json = false

    func run() throws {
        var logger = Logger(label: "tessera")
        logger.logLevel = verbose ? .debug : .warning
        EngineInfo.configureLogging(verbose: verbose)
        let progress = ProgressRenderer()
        let cancellation = CancellationFlag()
        let signals = SignalTrap([SIGINT, SIGTERM]) { cancellation.cancel() }
        defer { signals.release() }
        do throws(TesseraError) {
            var source = input
            var sampleDirectory: URL?
            if source == nil {
                let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-sample-\(UUID().uuidString)")
                try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
                let path = dir.appendingPathComponent("sample.mp4").path
                FileHandle.standardError.write(Data("tessera: no input given, generating a 10 s sample clip\n".utf8))
                try SampleGenerator.generate(to: path, seconds: 10, width: 1280, height: 720)
                source = path
                sampleDirectory = dir
            }
            defer { if let sampleDirectory { try? FileManager.default.removeItem(at: sampleDirectory) } }
            let transcoder = LocalTranscoder(logger: logger, cancellation: cancellation, progress: { progress.update($0) })
            let report = try transcoder.transcode(input: source!, output: output,
                                                  options: planning.jobOptions(encode.settings, audio: encode.audioSettings))
            progress.finish()
            let summary = TranscodeSummary(report, output: output)
            if json {
                print(CanonicalJSON.encode(summary, pretty: true))
            } else {
                FileHandle.standardError.write(Data((summary.text + "\n").utf8))
            }
        } catch {
            progress.finish()
            if error.kind == .canceled {
                FileHandle.standardError.write(Data("tessera: canceled, nothing written to \(output)\n".utf8))
                throw ExitCode(130)
            }
            throw Tessera.fail(error)
        }
    }
}

struct TranscodeSummary: Codable {
    var output: String
    var frames: Int
    var segments: Int
    var durationSeconds: Double
    var wallSeconds: Double
    var speed: Double
    var audio: String
    var level: String
    var preRollPackets: Int
    var dtsAdjustedAtJoins: Int

    init(_ r: TranscodeReport, output: String) {
        self.output = output
        frames = r.verification.frames
        segments = r.plan.cuts.segments.count
        durationSeconds = r.verification.videoDurationSeconds.rounded6
        wallSeconds = r.wallSeconds.rounded6
        speed = (r.verification.videoDurationSeconds / max(r.wallSeconds, 1e-9)).rounded6
        audio = r.audioCopied.map { $0 ? "copied" : "aac" } ?? "none"
        level = r.plan.settings.level ?? "auto"
        preRollPackets = r.plan.cuts.totalPreRollPackets
        dtsAdjustedAtJoins = r.stitch.dtsAdjusted
    }

    var text: String {
        String(format: "tessera: %@: %d frames in %d segments, %.2f s of video in %.2f s (%.2fx), audio %@, level %@",
               output, frames, segments, durationSeconds, wallSeconds, speed, audio, level)
    }
}
