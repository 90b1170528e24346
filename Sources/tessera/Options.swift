import ArgumentParser
import Foundation
import TesseraCore
import TesseraEngine

/// Planning options shared by `probe` and `transcode`.
struct PlanningOptions: ParsableArguments {
    @Option(help: "Target segment length in seconds (rounded to whole GOPs).")
    var segmentSeconds: Double = 8

    @Option(help: "Parallel encoders (default: CPUs divided by --threads).")
    var workers: Int?

    var resolvedWorkers: Int { workers ?? ProcessInfo.processInfo.activeProcessorCount }

    func validate() throws {
        guard segmentSeconds > 0 else { throw ValidationError("--segment-seconds must be positive") }
        if let workers, workers < 1 { throw ValidationError("--workers must be at least 1") }
    }

    func jobOptions(_ settings: EncoderSettings, audio: AudioSettings = AudioSettings()) -> JobOptions {
        JobOptions(settings: settings, audio: audio, segmentSeconds: segmentSeconds, workers: resolvedWorkers)
    }
}

/// Encoder options, named as ffmpeg users know them.
struct EncodeOptions: ParsableArguments {
    @Option(help: "Constant quality, 0-51 (default 23).") var crf: Double?
    @Option(help: "Target average bitrate, e.g. 2500k or 4M.", transform: parseRate) var bitrate: Int?
    @Option(help: "VBV maximum rate (with --bufsize), e.g. 3M.", transform: parseRate) var maxrate: Int?
    @Option(help: "VBV buffer size, e.g. 6M.", transform: parseRate) var bufsize: Int?
    @Option(help: "x264 speed preset: ultrafast ... veryslow.") var preset: String = "medium"
    @Option(help: "H.264 profile: baseline, main or high.") var profile: String = "high"
    @Option(help: "H.264 level, e.g. 4.1 (default: the lowest that fits, pinned for every segment).") var level: String?
    @Option(help: "Maximum GOP length in frames.") var keyint: Int = 250
    @Option(help: "B-frames (0 turns them off).") var bframes: Int = 3
    @Option(help: "libx264 threads per encoder.") var threads: Int = 1
    @Option(help: "Audio: auto (copy compatible AAC, else encode), copy, aac or none.") var audio: AudioSettings.Mode = .auto
    @Option(name: .customLong("audio-bitrate"), help: "AAC bitrate, e.g. 128k.", transform: parseRate) var audioBitrate: Int?

    func validate() throws {
        if crf != nil && bitrate != nil { throw ValidationError("give --crf or --bitrate, not both") }
    }

    var settings: EncoderSettings {
        EncoderSettings(preset: preset, crf: bitrate == nil ? (crf ?? 23) : nil, bitrate: bitrate, maxrate: maxrate,
                        bufsize: bufsize, profile: profile, level: level, keyint: keyint, bframes: bframes, threads: threads)
    }

    var audioSettings: AudioSettings { AudioSettings(mode: audio, bitrate: audioBitrate) }
}

extension AudioSettings.Mode: ExpressibleByArgument {}

/// "2500k", "4M", "800000" → bits per second.
func parseRate(_ text: String) throws -> Int {
    let lower = text.lowercased()
    var scale = 1.0
    var digits = Substring(lower)
    if lower.hasSuffix("k") { scale = 1e3; digits = digits.dropLast() }
    else if lower.hasSuffix("m") { scale = 1e6; digits = digits.dropLast() }
    guard let value = Double(digits), value > 0 else { throw ValidationError("'\(text)' is not a rate (e.g. 2500k, 4M)") }
    return Int(value * scale)
}
