/// Named sets of encoding options (`--recipe NAME`), listed by `tessera presets`. Options given on the
/// command line or in a settings file override a recipe's values one by one.
public struct Recipe: Sendable {
    public let name: String
    public let summary: String
    public let request: EncodingRequest

    public static let all: [Recipe] = [
        Recipe(name: "mobile", summary: "phones and messaging: 750 kb/s video within 1280x720, keyframe every 30 frames, High 4.1, 22.05 kHz 80 kb/s stereo AAC") {
            $0.bitrate = "750k"; $0.keyint = 30; $0.profile = "high"; $0.level = "4.1"; $0.maxSize = "1280x720"
            $0.audio = "aac"; $0.audioRate = 22050; $0.audioBitrate = "80k"; $0.audioChannels = 2
        },
        Recipe(name: "web-720p", summary: "streaming at 720p: CRF 23 capped at 4 Mb/s, keyframe every 2 s, 128 kb/s stereo AAC") {
            $0.crf = 23; $0.maxrate = "4M"; $0.bufsize = "8M"; $0.profile = "high"; $0.maxSize = "1280x720"
            $0.keyintSeconds = 2; $0.audio = "aac"; $0.audioBitrate = "128k"; $0.audioChannels = 2
        },
        Recipe(name: "web-1080p", summary: "streaming at 1080p: CRF 22 capped at 8 Mb/s, keyframe every 2 s, 160 kb/s stereo AAC") {
            $0.crf = 22; $0.maxrate = "8M"; $0.bufsize = "16M"; $0.profile = "high"; $0.maxSize = "1920x1080"
            $0.keyintSeconds = 2; $0.audio = "aac"; $0.audioBitrate = "160k"; $0.audioChannels = 2
        },
        Recipe(name: "streaming", summary: "adaptive streaming (HLS/DASH): rungs 1080, 720, 480 and 360 (none above the source), CRF 23 capped per rung, 6 s segments, keyframe every 2 s, 128 kb/s stereo AAC") {
            $0.ladder = ["1080", "720", "480", "360"]; $0.hlsTime = 6; $0.crf = 23; $0.preset = "medium"; $0.profile = "high"
            $0.keyintSeconds = 2; $0.audio = "aac"; $0.audioBitrate = "128k"; $0.audioChannels = 2
        },
        Recipe(name: "archive", summary: "keeping masters: CRF 18, preset slow, source size and frame rate, audio copied when MP4 can hold it") {
            $0.crf = 18; $0.preset = "slow"; $0.profile = "high"; $0.keyintSeconds = 10; $0.audio = "auto"
        },
    ]

    init(name: String, summary: String, _ fill: (inout EncodingRequest) -> Void) {
        var request = EncodingRequest()
        fill(&request)
        self.name = name
        self.summary = summary
        self.request = request
    }

    public static func named(_ name: String) throws(SettingsError) -> Recipe {
        guard let recipe = all.first(where: { $0.name == name }) else {
            throw SettingsError("unknown recipe '\(name)' (use one of \(all.map(\.name).joined(separator: ", ")); see tessera presets)")
        }
        return recipe
    }

    /// The stack `defaults < recipe < file < command line`, with the recipe named by the file or the command line.
    public static func stack(file: EncodingRequest?, commandLine: EncodingRequest) throws(SettingsError) -> EncodingRequest {
        let upper = file.map { commandLine.over($0) } ?? commandLine
        guard let name = upper.recipe else { return upper }
        var recipe = try named(name).request
        // A recipe's profile and level are H.264's: another codec takes its own defaults.
        if let codec = upper.codec, codec != VideoCodec.h264.rawValue {
            recipe.profile = nil
            recipe.level = nil
        }
        return upper.over(recipe)
    }
}
