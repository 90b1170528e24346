/// The video codec a job writes (`--codec`), and what each one's encoder takes: libx264, libx265 or SVT-AV1,
/// all through libavcodec.
public enum VideoCodec: String, Codable, Hashable, Sendable, CaseIterable {
    case h264
    case hevc
    case av1

    /// libavcodec's encoder.
    public var encoderName: String {
        switch self {
        case .h264: "libx264"
        case .hevc: "libx265"
        case .av1: "libsvtav1"
        }
    }

    /// How users and errors name the codec.
    public var displayName: String {
        switch self {
        case .h264: "H.264"
        case .hevc: "HEVC"
        case .av1: "AV1"
        }
    }

    /// x264 and x265 share preset names; SVT-AV1's are its numbers, 0 (slowest) to 13 (fastest).
    public var presets: [String] {
        switch self {
        case .h264, .hevc: EncoderSettings.presets
        case .av1: (0...13).map(String.init)
        }
    }

    public var profiles: [String] {
        switch self {
        case .h264: EncoderSettings.profiles
        case .hevc, .av1: ["main", "main10"]
        }
    }

    /// Each encoder's own defaults through ffmpeg (SVT-AV1's preset 10 and CRF 35 as it reports them).
    public var defaultPreset: String { self == .av1 ? "10" : "medium" }
    public var defaultCRF: Double { self == .h264 ? 23 : self == .hevc ? 28 : 35 }
    public var defaultProfile: String { self == .h264 ? "high" : "main" }

    /// SVT-AV1's own keyframe interval at a frame rate, as a whole-file encode through ffmpeg gets it: its default
    /// intra period ((⌊fps⌋ + 32) / 32 × 32 × 5 frames) plus the key frame, 161 frames at 24–31 fps and 321 at
    /// 50–60; nil for x264 and x265, whose default (250) does not depend on the rate.
    public func defaultKeyint(framesPerSecond: Double) -> Int? {
        guard self == .av1 else { return nil }
        return (max(0, Int(framesPerSecond)) + 32) / 32 * 32 * 5 + 1
    }

    /// x265's own B-frames at `preset` (3 at the two fastest, 8 from slower, else 4); nil: the settings' default
    /// (x264's 3; SVT-AV1 takes no count). A whole-file `ffmpeg -c:v libx265` encodes with these.
    public func defaultBFrames(preset: String) -> Int? {
        guard self == .hevc else { return nil }
        switch preset {
        case "ultrafast", "superfast": return 3
        case "slower", "veryslow", "placebo": return 8
        default: return 4
        }
    }

    /// Constant quality's range: x264 and x265 0–51, SVT-AV1 1–63 in whole steps.
    public var crfRange: ClosedRange<Double> { self == .av1 ? 1...63 : 0...51 }

    /// HEVC levels as x265's `level-idc` takes them.
    public static let hevcLevels = HEVCLevel.table.map(\.name)

    /// The option a codec does not have, if `settings` (from `request`) asks for one: SVT-AV1 takes no B-frame
    /// count, level or VBV through libavcodec 5.1. Two passes are Tessera's own for it (`AV1FirstPass`).
    func unsupported(bframes: Bool, level: Bool, vbv: Bool) -> String? {
        if self == .av1, bframes { return "--bframes" }
        if self == .av1, level { return "--level" }
        if self == .av1, vbv { return "--maxrate/--bufsize" }
        return nil
    }
}
