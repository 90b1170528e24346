import ArgumentParser
import Foundation
import TesseraCore
import TesseraEngine

/// Planning options shared by `probe` and `transcode`.
struct PlanningOptions: ParsableArguments {
    @Option(help: "Target segment length in seconds, rounded to whole GOPs (default: cut only where one encode of the whole file puts IDR frames, about 8 s apart).")
    var segmentSeconds: Double?

    @Option(help: "Parallel encoders (default: CPUs divided by --threads).")
    var workers: Int?

    var resolvedWorkers: Int { workers ?? ProcessInfo.processInfo.activeProcessorCount }

    func validate() throws {
        if let segmentSeconds, !(segmentSeconds > 0) { throw ValidationError("--segment-seconds must be positive") }
        if let workers, workers < 1 { throw ValidationError("--workers must be at least 1") }
    }

    /// Default encoder settings with these planning options (what `probe` shows).
    var jobOptions: JobOptions { JobOptions(segmentSeconds: segmentSeconds, workers: resolvedWorkers) }
}

/// Encoder options, named as ffmpeg users know them. Each one given overrides the same option of a
/// `--settings` file, which overrides the `--recipe`, which overrides the defaults.
struct EncodeOptions: ParsableArguments {
    @Option(help: "A named set of options (see `tessera presets`): mobile, web-720p, web-1080p, streaming, archive.") var recipe: String?
    @Option(help: ArgumentHelp("Options from a JSON or YAML file, keys named as these options (crf: 20, max-size: 1280x720).",
                               valueName: "file")) var settings: String?

    @Option(help: "Video codec: h264 (libx264, default), hevc (libx265, tagged hvc1) or av1 (SVT-AV1).") var codec: String?
    @Option(help: "Constant quality: 0-51 for h264 (default 23) and hevc (default 28), 1-63 for av1 (default 35).") var crf: Double?
    @Option(help: "Target average bitrate over the file, e.g. 2500k or 4M, in two passes (see --passes; CBR: give --maxrate the same).")
    var bitrate: String?
    @Option(help: "With --bitrate: 2 (default), a first pass, the bits allocated over the whole file, a second pass; 1, one pass per segment (CBR: always 1).")
    var passes: Int?
    @Option(help: "VBV maximum rate (with --bufsize), e.g. 3M; with --crf it caps the quality mode.") var maxrate: String?
    @Option(help: "VBV buffer size, e.g. 6M.") var bufsize: String?
    @Option(help: "Speed preset: ultrafast ... veryslow for h264 and hevc (default medium), 0-13 for av1 (default 10).") var preset: String?
    @Option(help: "Profile: baseline, main, high (default) or high10 for h264; main (default) or main10 for hevc and av1.") var profile: String?
    @Option(help: "Level, e.g. 3.1 or 4.1 (h264 default: the lowest that fits, pinned for every segment; hevc: x265's choice; not av1).") var level: String?
    @Option(help: "Maximum GOP length in frames (default 250).") var keyint: Int?
    @Option(help: "Maximum GOP length in seconds; with --keyint, whichever is shorter.") var keyintSeconds: Double?
    @Option(help: "B-frames, 0-16 (0 turns them off; default 3, HEVC x265's for the preset).") var bframes: Int?
    @Option(help: "libx264 threads per encoder (default 1).") var threads: Int?

    @Option(help: ArgumentHelp("Exact output size, e.g. 1280x720 (even numbers).", valueName: "WxH")) var size: String?
    @Option(help: ArgumentHelp("Fit inside this box keeping the aspect ratio; never enlarges.", valueName: "WxH")) var maxSize: String?
    @Option(help: "Scaler: bicubic (default), bilinear, lanczos or fast.") var scaler: String?
    @Option(help: "Constant output frame rate, e.g. 30, 29.97 or 30000/1001 (default: the source's timing).") var fps: String?
    @Option(help: "auto (apply the source's rotation, default), none (keep pixels and rotation metadata), 0, 90, 180 or 270 clockwise.")
    var rotate: String?
    @Option(help: "Mirror after rotating: horizontal, vertical (repeat or comma-separate for both).") var mirror: [String] = []
    @Option(help: "Convert colour to bt709 or bt601 (default: carry the source's colour tags).") var color: String?

    @Option(help: ArgumentHelp("Renditions from one decode: heights with an optional peak rate, e.g. 1080,720:3M,480,360; -o DIR/master.m3u8 (HLS), DIR/manifest.mpd (DASH) or out.mp4 (out_720p.mp4, ...).",
                               valueName: "rungs")) var ladder: String?
    @Option(name: .customLong("hls-time"), help: ArgumentHelp("With --ladder: segment length, whole GOPs with IDRs aligned across rungs (default 6).",
                                                              valueName: "seconds")) var hlsTime: Double?
    @Flag(name: .customLong("also-dash"), help: "With an .m3u8 output: also a DASH manifest.mpd over the same segments.") var alsoDASH = false
    @Flag(name: .customLong("also-hls"), help: "With an .mpd output: also an HLS master.m3u8 over the same segments.") var alsoHLS = false
    @Flag(name: .customLong("audio-per-rung"), help: "With --ladder: mux the AAC into every rung instead of one audio rendition.")
    var audioPerRung = false
    @Flag(name: .customLong("two-pass"), help: "With --ladder: each rung's rate is its average, encoded in two passes (peak at most twice it).")
    var twoPass = false

    @Option(help: "Audio: auto (copy compatible AAC, else encode; default), copy, aac or none.") var audio: String?
    @Option(name: .customLong("audio-bitrate"), help: "AAC bitrate, e.g. 128k.") var audioBitrate: String?
    @Option(name: .customLong("audio-rate"), help: "AAC sample rate: 22050, 44100, 48000, ...") var audioRate: Int?
    @Option(name: .customLong("audio-channels"), help: "Output channels; fewer than the source's are downmixed (5.1 to stereo).")
    var audioChannels: Int?
    @Option(name: .customLong("audio-track"), help: "Which audio stream, counting from 0 (default: the main one).") var audioTrack: Int?

    /// The options resolved as far as they can be without the input and the output (the settings file read,
    /// the recipe found, every value in range), so that a mistake in them stops the command before anything
    /// starts. The command's own `validate()` checks them against its output (`spec(output:)`).
    func validate() throws {
        _ = try stacked()
    }

    /// The options given on the command line, as one layer.
    var commandLine: EncodingRequest {
        var r = EncodingRequest()
        r.recipe = recipe
        r.codec = codec
        r.crf = crf
        r.bitrate = bitrate
        r.maxrate = maxrate
        r.bufsize = bufsize
        r.preset = preset
        r.profile = profile
        r.level = level
        r.keyint = keyint
        r.keyintSeconds = keyintSeconds
        r.bframes = bframes
        r.threads = threads
        r.passes = passes
        r.size = size
        r.maxSize = maxSize
        r.scaler = scaler
        r.fps = fps
        r.rotate = rotate
        r.mirror = mirror.isEmpty ? nil : mirror.flatMap { $0.split(separator: ",").map(String.init) }
        r.color = color
        r.audio = audio
        r.audioBitrate = audioBitrate
        r.audioRate = audioRate
        r.audioChannels = audioChannels
        r.audioTrack = audioTrack
        r.ladder = ladder.map { [$0] }
        r.hlsTime = hlsTime
        r.audioPerRung = audioPerRung ? true : nil
        r.twoPass = twoPass ? true : nil
        return r
    }

    /// The job's frozen spec for `output`: defaults < recipe < settings file < command line, with a ladder's
    /// packaging chosen by the output's name. `segmentSeconds` is the command line's, if given.
    func spec(segmentSeconds: Double? = nil, output: String) throws(TesseraError) -> JobSpec {
        var (request, spec) = try stacked(segmentSeconds: segmentSeconds)
        do {
            spec.ladder = try request.ladderSpec(output: output, alsoHLS: alsoHLS, alsoDASH: alsoDASH)
        } catch {
            throw TesseraError(.settings, "", error.description)
        }
        return spec
    }

    /// The layers stacked, and the settings they resolve to without the output.
    func stacked(segmentSeconds: Double? = nil) throws(TesseraError) -> (request: EncodingRequest, spec: JobSpec) {
        var top = commandLine
        top.segmentSeconds = segmentSeconds
        let file = try settings.map { (path: String) throws(TesseraError) -> EncodingRequest in try SettingsFile.read(path) }
        do {
            let request = try Recipe.stack(file: file, commandLine: top)
            return (request, try request.resolved())
        } catch {
            throw TesseraError(.settings, "", error.description)
        }
    }
}

/// `--settings FILE`: JSON (`.json`, or text starting with `{`) or YAML.
enum SettingsFile {
    static func read(_ path: String) throws(TesseraError) -> EncodingRequest {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .input(path, FileManager.default.fileExists(atPath: path) ? "cannot read the settings file" : "no such file")
        }
        let text = String(decoding: data, as: UTF8.self)
        do {
            if path.lowercased().hasSuffix(".json") || text.drop(while: \.isWhitespace).first == "{" {
                return try JSONDecoder().decode(EncodingRequest.self, from: data)
            }
            return try YAMLSettings.decode(text)
        } catch {
            throw .input(path, "not a settings file (\(SettingsFile.describe(error)))")
        }
    }

    /// A decoding error in one line: the key and what is wrong with it.
    static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context), DecodingError.typeMismatch(_, let context),
             DecodingError.valueNotFound(_, let context):
            let key = context.codingPath.map(\.stringValue).joined(separator: ".")
            return key.isEmpty ? context.debugDescription : "\(key): \(context.debugDescription)"
        default:
            return "\(error)".split(separator: "\n").first.map(String.init) ?? "\(error)"
        }
    }
}
