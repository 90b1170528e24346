/// The frozen encoder settings of a job: every segment is encoded from this one value, so every
/// segment's SPS/PPS come out byte-identical ("identical rate control").
public struct EncoderSettings: Codable, Hashable, Sendable {
    public static let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
    public static let profiles = ["baseline", "main", "high", "high10"]

    /// The codec; nil is H.264 (so that the settings of H.264 jobs, and their digests, read as before).
    public var codec: VideoCodec?
    /// The encoder's speed preset: x264's and x265's names, SVT-AV1's numbers.
    public var preset: String
    /// Constant quality; used when `bitrate` is nil.
    public var crf: Double?
    /// Target average bitrate in bits per second.
    public var bitrate: Int?
    /// VBV maximum rate and buffer size in bits (capped CRF, or constrained ABR).
    public var maxrate: Int?
    public var bufsize: Int?
    public var profile: String
    /// H.264 level as x264 writes it ("4.1"); nil until the planner pins it for the job.
    public var level: String?
    /// Maximum GOP length in frames.
    public var keyint: Int
    /// Maximum GOP length in seconds; the planner folds it into `keyint` (whichever is shorter).
    public var keyintSeconds: Double?
    /// true: no `--keyint` was given and the encoder's own interval depends on the frame rate (SVT-AV1's), so the
    /// planner sets `keyint` from the output's rate; nil otherwise.
    public var encoderKeyint: Bool?
    public var bframes: Int
    /// libx264 threads per encoder.
    public var threads: Int
    /// Rate-control passes with `bitrate`: nil or 1, one-pass ABR per segment; 2, a first pass per segment,
    /// the bits allocated over the whole file, and a second pass per segment (see docs/architecture.md).
    /// A request with `--bitrate` and no `--passes` resolves to 2, except for CBR.
    public var passes: Int?

    public init(preset: String = "medium", crf: Double? = 23, bitrate: Int? = nil, maxrate: Int? = nil,
                bufsize: Int? = nil, profile: String = "high", level: String? = nil, keyint: Int = 250,
                bframes: Int = 3, threads: Int = 1, keyintSeconds: Double? = nil, passes: Int? = nil) {
        self.preset = preset
        self.crf = crf
        self.bitrate = bitrate
        self.maxrate = maxrate
        self.bufsize = bufsize
        self.profile = profile
        self.level = level
        self.keyint = keyint
        self.keyintSeconds = keyintSeconds
        self.bframes = bframes
        self.threads = threads
        self.passes = passes
    }

    /// The codec the settings encode.
    public var videoCodec: VideoCodec { codec ?? .h264 }

    /// Checks the values a user can get wrong; the message names the option.
    public func validate() throws(SettingsError) {
        let codec = videoCodec
        let of = codec == .h264 ? "" : " for \(codec.displayName)"
        guard codec.presets.contains(preset) else {
            throw SettingsError("unknown --preset '\(preset)'\(of) (use one of \(codec.presets.joined(separator: ", ")))")
        }
        guard codec.profiles.contains(profile) else {
            throw SettingsError("unknown --profile '\(profile)'\(of) (use one of \(codec.profiles.joined(separator: ", ")))")
        }
        if let crf, !codec.crfRange.contains(crf) || (codec == .av1 && crf != crf.rounded()) {
            let range = codec.crfRange
            throw SettingsError("--crf must be \(codec == .av1 ? "a whole number " : "")between \(Int(range.lowerBound)) and \(Int(range.upperBound))\(of), not \(crf)")
        }
        if let option = codec.unsupported(bframes: false, level: level != nil, vbv: maxrate != nil || bufsize != nil) {
            throw SettingsError("\(option) does not apply to \(codec.displayName)")
        }
        if let bitrate, bitrate <= 0 { throw SettingsError("--bitrate must be positive") }
        if let maxrate, maxrate <= 0 { throw SettingsError("--maxrate must be positive") }
        if let bufsize, bufsize <= 0 { throw SettingsError("--bufsize must be positive") }
        if (maxrate == nil) != (bufsize == nil) { throw SettingsError("--maxrate and --bufsize go together") }
        if bitrate == nil && crf == nil { throw SettingsError("give --crf or --bitrate") }
        guard keyint >= 1 else { throw SettingsError("--keyint must be at least 1") }
        if let keyintSeconds, !(keyintSeconds > 0) { throw SettingsError("--keyint-seconds must be positive") }
        guard (0...16).contains(bframes) else { throw SettingsError("--bframes must be between 0 and 16") }
        guard threads >= 1 else { throw SettingsError("--threads must be at least 1") }
        if let passes, !(1...2).contains(passes) { throw SettingsError("--passes must be 1 or 2") }
        if passes == 2, bitrate == nil { throw SettingsError("--passes 2 needs --bitrate") }
        if passes == 2, let maxrate, let bitrate, maxrate <= bitrate {
            throw SettingsError("--passes 2 does not apply to CBR (--maxrate equal to --bitrate)")
        }
        if codec == .hevc, let level, !VideoCodec.hevcLevels.contains(level) {
            throw SettingsError("unknown --level '\(level)' for HEVC (use one of \(VideoCodec.hevcLevels.joined(separator: ", ")))")
        }
        if codec == .h264, let level, H264Level.named(level) == nil {
            throw SettingsError("unknown --level '\(level)' (use one of \(H264Level.table.map(\.name).joined(separator: ", ")))")
        }
    }

    /// Whether segments are encoded in two passes with the bits allocated over the whole file.
    public var twoPass: Bool { bitrate != nil && passes == 2 }

    /// Whether the profile stores 10 bits a sample.
    public var tenBit: Bool { profile == "high10" || profile == "main10" }

    /// B-frames the profile allows (SVT-AV1 takes no count: its mini-GOPs are hierarchical).
    public var effectiveBFrames: Int { profile == "baseline" || videoCodec == .av1 ? 0 : bframes }

    /// Frames x264 looks ahead for its decisions with these settings: rc-lookahead for MB-tree from
    /// veryfast up; at ultrafast and superfast (no MB-tree) enough for one mini-GOP's B-frame placement.
    /// x265 (its rc-lookahead per preset) and SVT-AV1 (no run-out, see `RunOut`) differ.
    public var lookaheadFrames: Int {
        switch videoCodec {
        case .h264: break
        case .hevc: return ["ultrafast": 5, "superfast": 10, "veryfast": 15, "faster": 15, "fast": 15, "medium": 20,
                            "slow": 25, "slower": 40, "veryslow": 40][preset] ?? 60
        case .av1: return 0
        }
        switch preset {
        case "ultrafast", "superfast": return effectiveBFrames > 0 ? effectiveBFrames + 1 : 0
        case "veryfast": return 10
        case "faster": return 20
        case "fast": return 30
        case "medium": return 40
        case "slow": return 50
        default: return 60
        }
    }

    /// Whether x264 runs its macroblock tree with these settings (every preset from veryfast up).
    /// x265 (CU-tree) by the same rule; SVT-AV1 cannot be given the closed keyframe a lead-in
    /// ends on (FFmpeg 5.1's wrapper ignores forced key frames), so it gets none.
    public var usesMacroblockTree: Bool { videoCodec != .av1 && preset != "ultrafast" && preset != "superfast" }

    /// Flat frames shown to the encoder before the first frame of every segment but the first, then
    /// dropped, so that its first IDR gets a running encode's quantiser (see docs/architecture.md).
    public var leadInFrames: Int {
        guard bitrate == nil, crf != nil, maxrate == nil, usesMacroblockTree else { return 0 }
        // x265 encodes a flat 1080p frame at about 40 % of a real one's cost at medium, and its segments
        // came out the same after 10 flat frames as after 30 (veryfast, medium, slow; docs/architecture.md).
        if videoCodec == .hevc { return 10 }
        // libx264's IDR quantiser converges over about 30 frames; a flat frame costs the faster presets a
        // larger share of a real one's encode (about 40 % at veryfast, 12 % at medium, at 1080p).
        switch preset {
        case "veryfast", "faster": return 12
        case "fast": return 20
        default: return 30
        }
    }

    /// The longest lead-in a task may ask for.
    public static let maximumLeadIn = 250

    /// A stable digest of the settings (FNV-1a over the canonical JSON), to tell jobs' settings apart.
    public var digest: String { CanonicalJSON.digest(self) }
}

public struct SettingsError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Audio handling of a job.
public struct AudioSettings: Codable, Hashable, Sendable {
    public enum Mode: String, Codable, Sendable, CaseIterable {
        /// Copy compatible AAC, otherwise encode to AAC.
        case auto
        case copy
        case aac
        case none
    }

    public var mode: Mode
    /// Bits per second for AAC; nil: 64 kb/s per channel.
    public var bitrate: Int?
    /// Output sample rate; nil: the source's.
    public var sampleRate: Int?
    /// Output channels; nil: the source's, at most 8. Fewer channels than the source are downmixed.
    public var channels: Int?
    /// Which audio stream, counting audio streams from 0 (ffmpeg's `-map 0:a:N`); nil: the default one.
    public var track: Int?

    public static let sampleRates = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000]

    public init(mode: Mode = .auto, bitrate: Int? = nil, sampleRate: Int? = nil, channels: Int? = nil, track: Int? = nil) {
        self.mode = mode
        self.bitrate = bitrate
        self.sampleRate = sampleRate
        self.channels = channels
        self.track = track
    }

    public func validate() throws(SettingsError) {
        if let sampleRate, !Self.sampleRates.contains(sampleRate) {
            throw SettingsError("--audio-rate \(sampleRate) is not an AAC sample rate (use one of \(Self.sampleRates.map(String.init).joined(separator: ", ")))")
        }
        if let channels, !(1...8).contains(channels) { throw SettingsError("--audio-channels must be between 1 and 8") }
        if let bitrate, !(8_000...1_536_000).contains(bitrate) { throw SettingsError("--audio-bitrate must be between 8k and 1536k") }
        if let track, track < 0 { throw SettingsError("--audio-track counts from 0") }
        if mode == .copy, sampleRate != nil || channels != nil || bitrate != nil {
            throw SettingsError("--audio copy cannot change the rate, channels or bitrate; use --audio aac")
        }
    }
}
