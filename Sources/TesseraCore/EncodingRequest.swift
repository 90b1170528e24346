/// One layer of encoding options, named as on the command line ("keyint-seconds", "max-size"):
/// a named recipe, a settings file or the options given. Layers stack, the later winning value by value;
/// `resolved()` turns the stack into the settings frozen with the job.
public struct EncodingRequest: Codable, Hashable, Sendable {
    public var recipe: String?
    /// `h264` (default), `hevc` or `av1`.
    public var codec: String?
    public var crf: Double?
    public var bitrate: String?
    public var maxrate: String?
    public var bufsize: String?
    public var preset: String?
    public var profile: String?
    public var level: String?
    public var keyint: Int?
    public var keyintSeconds: Double?
    public var bframes: Int?
    public var threads: Int?
    /// Rate-control passes with --bitrate: 1 (one-pass ABR per segment) or 2 (allocated over the file); nil: 2,
    /// except for CBR.
    public var passes: Int?
    public var size: String?
    public var maxSize: String?
    public var scaler: String?
    public var fps: String?
    public var rotate: String?
    public var mirror: [String]?
    public var color: String?
    public var audio: String?
    public var audioBitrate: String?
    public var audioRate: Int?
    public var audioChannels: Int?
    public var audioTrack: Int?
    public var segmentSeconds: Double?
    /// Rendition ladder rungs as given (`1080`, `720:3M`); see `Ladder`.
    public var ladder: [String]?
    /// Packaging segment length of a ladder in seconds (`--hls-time`); nil: `LadderSpec.defaultSegmentSeconds`.
    public var hlsTime: Double?
    /// A ladder's AAC muxed into every rung rather than its own rendition (`--audio-per-rung`).
    public var audioPerRung: Bool?
    /// A ladder's rung rates as averages, each rung encoded in two passes (`--two-pass`).
    public var twoPass: Bool?
    /// The job's priority, 0–100 (`submit --priority`): not an encoder setting, so not in the job's spec.
    public var priority: Int?

    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case recipe, codec, crf, bitrate, maxrate, bufsize, preset, profile, level, keyint
        case keyintSeconds = "keyint-seconds"
        case bframes, threads, passes, size
        case maxSize = "max-size"
        case scaler, fps, rotate, mirror, color, audio
        case audioBitrate = "audio-bitrate"
        case audioRate = "audio-rate"
        case audioChannels = "audio-channels"
        case audioTrack = "audio-track"
        case segmentSeconds = "segment-seconds"
        case ladder
        case hlsTime = "hls-time"
        case audioPerRung = "audio-per-rung"
        case twoPass = "two-pass"
        case priority
    }

    /// Settings files may write numbers as strings ("2500k") or strings as numbers (fps: 25); unknown
    /// keys are refused so that a typo does not pass silently.
    public init(from decoder: Decoder) throws {
        let known = try decoder.container(keyedBy: AnyKey.self)
        for key in known.allKeys where CodingKeys(stringValue: key.stringValue) == nil {
            throw DecodingError.dataCorruptedError(forKey: key, in: known, debugDescription: Self.unknownKey(key.stringValue))
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func text(_ key: CodingKeys) throws -> String? {
            guard c.contains(key) else { return nil }
            if let value = try? c.decode(String.self, forKey: key) { return value }
            if let value = try? c.decode(Int.self, forKey: key) { return String(value) }
            return String(try c.decode(Double.self, forKey: key))
        }
        func number(_ key: CodingKeys) throws -> Double? {
            guard let value = try text(key) else { return nil }
            guard let number = Double(value) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "'\(value)' is not a number")
            }
            return number
        }
        func integer(_ key: CodingKeys) throws -> Int? {
            guard let value = try number(key) else { return nil }
            guard value == value.rounded(), abs(value) < 1e9 else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "'\(value)' is not a whole number")
            }
            return Int(value)
        }
        recipe = try text(.recipe)
        codec = try text(.codec)
        crf = try number(.crf)
        bitrate = try text(.bitrate)
        maxrate = try text(.maxrate)
        bufsize = try text(.bufsize)
        preset = try text(.preset)
        profile = try text(.profile)
        level = try text(.level)
        keyint = try integer(.keyint)
        keyintSeconds = try number(.keyintSeconds)
        bframes = try integer(.bframes)
        threads = try integer(.threads)
        passes = try integer(.passes)
        size = try text(.size)
        maxSize = try text(.maxSize)
        scaler = try text(.scaler)
        fps = try text(.fps)
        rotate = try text(.rotate)
        if let list = try? c.decodeIfPresent([String].self, forKey: .mirror) { mirror = list } else {
            mirror = try text(.mirror).map { $0.split(separator: ",").map { String($0).trimmingSpaces } }
        }
        color = try text(.color)
        audio = try text(.audio)
        audioBitrate = try text(.audioBitrate)
        audioRate = try integer(.audioRate)
        audioChannels = try integer(.audioChannels)
        audioTrack = try integer(.audioTrack)
        segmentSeconds = try number(.segmentSeconds)
        ladder = try Self.ladderItems(c, .ladder)
        hlsTime = try number(.hlsTime)
        audioPerRung = try c.decodeIfPresent(Bool.self, forKey: .audioPerRung)
        twoPass = try c.decodeIfPresent(Bool.self, forKey: .twoPass)
        priority = try integer(.priority)
    }

    /// An unknown key, with the known one when only its spelling differs (ffmpeg's `hls_time` for `hls-time`).
    static func unknownKey(_ key: String) -> String {
        let hyphenated = String(key.map { $0 == "_" ? "-" : $0 })
        guard hyphenated != key, CodingKeys(stringValue: hyphenated) != nil else { return "unknown option '\(key)'" }
        return "unknown option '\(key)': use '\(hyphenated)'"
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// This layer over `lower`: every value given here wins. Choosing one rate control (or one sizing)
    /// here drops the other one from below, so `--crf` overrides a recipe's bitrate.
    public func over(_ lower: EncodingRequest) -> EncodingRequest {
        var base = lower
        if crf != nil { base.bitrate = nil; base.passes = nil; base.twoPass = nil }
        if bitrate != nil { base.crf = nil }
        if twoPass == true { base.crf = nil }
        if size != nil { base.maxSize = nil }
        if maxSize != nil { base.size = nil }
        if ladder != nil { base.dropOptionsALadderReplaces() }
        var merged = self
        merged.recipe = recipe ?? base.recipe
        merged.codec = codec ?? base.codec
        merged.crf = crf ?? base.crf
        merged.bitrate = bitrate ?? base.bitrate
        merged.maxrate = maxrate ?? base.maxrate
        merged.bufsize = bufsize ?? base.bufsize
        merged.preset = preset ?? base.preset
        merged.profile = profile ?? base.profile
        merged.level = level ?? base.level
        merged.keyint = keyint ?? base.keyint
        merged.keyintSeconds = keyintSeconds ?? base.keyintSeconds
        merged.bframes = bframes ?? base.bframes
        merged.threads = threads ?? base.threads
        merged.passes = passes ?? base.passes
        merged.size = size ?? base.size
        merged.maxSize = maxSize ?? base.maxSize
        merged.scaler = scaler ?? base.scaler
        merged.fps = fps ?? base.fps
        merged.rotate = rotate ?? base.rotate
        merged.mirror = mirror ?? base.mirror
        merged.color = color ?? base.color
        merged.audio = audio ?? base.audio
        merged.audioBitrate = audioBitrate ?? base.audioBitrate
        merged.audioRate = audioRate ?? base.audioRate
        merged.audioChannels = audioChannels ?? base.audioChannels
        merged.audioTrack = audioTrack ?? base.audioTrack
        merged.segmentSeconds = segmentSeconds ?? base.segmentSeconds
        merged.ladder = ladder ?? base.ladder
        merged.hlsTime = hlsTime ?? base.hlsTime
        merged.audioPerRung = audioPerRung ?? base.audioPerRung
        merged.twoPass = twoPass ?? base.twoPass
        merged.priority = priority ?? base.priority
        return merged
    }

    /// The frozen settings, validated; each message names the option at fault.
    public func resolved() throws(SettingsError) -> JobSpec {
        if crf != nil && bitrate != nil { throw SettingsError("give --crf or --bitrate, not both") }
        // What is not asked for takes the defaults of the settings and the job.
        let defaults = JobSpec()
        guard let videoCodec = VideoCodec(rawValue: codec ?? "h264") else {
            throw SettingsError("unknown --codec '\(codec ?? "")' (use one of \(VideoCodec.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        if let option = videoCodec.unsupported(bframes: bframes != nil, level: level != nil, vbv: maxrate != nil || bufsize != nil) {
            throw SettingsError("\(option) does not apply to --codec \(videoCodec.rawValue)")
        }
        if videoCodec != .h264, ladder != nil, twoPass == true {
            throw SettingsError("--two-pass makes H.264 rungs only: leave out --codec \(videoCodec.rawValue) or --two-pass")
        }
        let preset = preset ?? videoCodec.defaultPreset
        var settings = EncoderSettings(
            preset: preset, crf: bitrate == nil ? (crf ?? videoCodec.defaultCRF) : nil,
            bitrate: try Self.rate(bitrate, "--bitrate"), maxrate: try Self.rate(maxrate, "--maxrate"),
            bufsize: try Self.rate(bufsize, "--bufsize"), profile: profile ?? videoCodec.defaultProfile, level: level,
            keyint: keyint ?? defaults.settings.keyint,
            bframes: bframes ?? videoCodec.defaultBFrames(preset: preset) ?? defaults.settings.bframes,
            threads: threads ?? defaults.settings.threads, keyintSeconds: keyintSeconds, passes: passes)
        if videoCodec != .h264 { settings.codec = videoCodec }
        // SVT-AV1's own interval depends on the frame rate: the planner sets it (`defaultKeyint`).
        if keyint == nil, videoCodec == .av1 { settings.encoderKeyint = true }
        // --bitrate runs two passes unless told otherwise; CBR stays one pass. Frozen with the job.
        if settings.passes == nil, let rate = settings.bitrate, (settings.maxrate ?? .max) > rate {
            settings.passes = 2
        }
        try settings.validate()

        guard let mode = AudioSettings.Mode(rawValue: audio ?? "auto") else {
            throw SettingsError("unknown --audio '\(audio ?? "")' (use one of \(AudioSettings.Mode.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let audioSettings = AudioSettings(mode: mode, bitrate: try Self.rate(audioBitrate, "--audio-bitrate"),
                                          sampleRate: audioRate, channels: audioChannels, track: audioTrack)
        try audioSettings.validate()

        var picture = PictureSettings(scaler: scaler, rotate: rotate)
        if let size {
            guard let parsed = FrameSize(size) else { throw SettingsError("--size '\(size)' is not WIDTHxHEIGHT (e.g. 1280x720)") }
            picture.size = parsed
        }
        if let maxSize {
            guard let parsed = FrameSize(maxSize) else { throw SettingsError("--max-size '\(maxSize)' is not WIDTHxHEIGHT (e.g. 1280x720)") }
            picture.maxSize = parsed
        }
        if let fps {
            guard let rate = Rational(frameRate: fps) else { throw SettingsError("--fps '\(fps)' is not a frame rate (e.g. 30, 29.97, 30000/1001)") }
            picture.fps = rate
        }
        if let mirror {
            var mirrors: [PictureSettings.Mirror] = []
            for name in mirror {
                guard let value = PictureSettings.Mirror(rawValue: name) else {
                    throw SettingsError("unknown --mirror '\(name)' (use horizontal or vertical; give both for both)")
                }
                mirrors.append(value)
            }
            picture.mirror = mirrors
        }
        if let color {
            guard let standard = PictureSettings.ColorStandard(rawValue: color) else {
                throw SettingsError("unknown --color '\(color)' (use bt709 or bt601)")
            }
            picture.color = standard
        }
        try picture.validate()
        if let segmentSeconds, !(segmentSeconds > 0) { throw SettingsError("--segment-seconds must be positive") }
        try checkLadder(settings: settings, picture: picture)
        return JobSpec(settings: settings, audio: audioSettings, segmentSeconds: segmentSeconds ?? defaults.segmentSeconds,
                       picture: picture)
    }

    static func rate(_ text: String?, _ option: String) throws(SettingsError) -> Int? {
        guard let text else { return nil }
        return try parseRate(text, option)
    }

    /// "2500k", "4M", "800000" → bits per second.
    public static func parseRate(_ text: String, _ option: String) throws(SettingsError) -> Int {
        let lower = text.lowercased().trimmingSpaces
        var scale = 1.0
        var digits = Substring(lower)
        if lower.hasSuffix("k") { scale = 1e3; digits = digits.dropLast() } else if lower.hasSuffix("m") { scale = 1e6; digits = digits.dropLast() }
        guard let value = Double(digits), value > 0, value * scale < 1e10 else {
            throw SettingsError("\(option) '\(text)' is not a rate (e.g. 2500k, 4M)")
        }
        return Int(value * scale)
    }
}

extension String {
    var trimmingSpaces: String { String(Substring(self).trimmingSpaces) }
}
