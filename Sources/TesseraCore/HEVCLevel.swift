/// HEVC level limits for the Main tier (ITU-T H.265 Tables A.8 and A.9), used to pin one level per ladder rung as
/// for H.264: x265's own choice also counts the VBV buffer and moves to the High tier when it is large.
public struct HEVCLevel: Sendable, Hashable {
    public let name: String
    /// general_level_idc: 30 times the level number.
    public var idc: Int { Int((Double(name)! * 30).rounded()) }
    let maxLumaPictureSize: Int
    let maxLumaSampleRate: Int
    /// Main tier, in 1000 bits (CpbVclFactor 1000 for Main and Main 10).
    let maxCPBKbits: Int
    let maxBitrateKbps: Int

    public static let table: [HEVCLevel] = [
        .init(name: "1", maxLumaPictureSize: 36864, maxLumaSampleRate: 552_960, maxCPBKbits: 350, maxBitrateKbps: 128),
        .init(name: "2", maxLumaPictureSize: 122_880, maxLumaSampleRate: 3_686_400, maxCPBKbits: 1500, maxBitrateKbps: 1500),
        .init(name: "2.1", maxLumaPictureSize: 245_760, maxLumaSampleRate: 7_372_800, maxCPBKbits: 3000, maxBitrateKbps: 3000),
        .init(name: "3", maxLumaPictureSize: 552_960, maxLumaSampleRate: 16_588_800, maxCPBKbits: 6000, maxBitrateKbps: 6000),
        .init(name: "3.1", maxLumaPictureSize: 983_040, maxLumaSampleRate: 33_177_600, maxCPBKbits: 10000, maxBitrateKbps: 10000),
        .init(name: "4", maxLumaPictureSize: 2_228_224, maxLumaSampleRate: 66_846_720, maxCPBKbits: 12000, maxBitrateKbps: 12000),
        .init(name: "4.1", maxLumaPictureSize: 2_228_224, maxLumaSampleRate: 133_693_440, maxCPBKbits: 20000, maxBitrateKbps: 20000),
        .init(name: "5", maxLumaPictureSize: 8_912_896, maxLumaSampleRate: 267_386_880, maxCPBKbits: 25000, maxBitrateKbps: 25000),
        .init(name: "5.1", maxLumaPictureSize: 8_912_896, maxLumaSampleRate: 534_773_760, maxCPBKbits: 40000, maxBitrateKbps: 40000),
        .init(name: "5.2", maxLumaPictureSize: 8_912_896, maxLumaSampleRate: 1_069_547_520, maxCPBKbits: 60000, maxBitrateKbps: 60000),
        .init(name: "6", maxLumaPictureSize: 35_651_584, maxLumaSampleRate: 1_069_547_520, maxCPBKbits: 60000, maxBitrateKbps: 60000),
        .init(name: "6.1", maxLumaPictureSize: 35_651_584, maxLumaSampleRate: 2_139_095_040, maxCPBKbits: 120_000, maxBitrateKbps: 120_000),
        .init(name: "6.2", maxLumaPictureSize: 35_651_584, maxLumaSampleRate: 4_278_190_080, maxCPBKbits: 240_000, maxBitrateKbps: 240_000),
    ]

    public static func named(_ name: String) -> HEVCLevel? {
        let trimmed = name.hasSuffix(".0") ? String(name.dropLast(2)) : name
        return table.first { $0.name == trimmed }
    }

    /// Why this level's Main tier cannot carry the stream, or nil when it can: x265's own checks (picture size, each
    /// side at most √(8 × MaxLumaPs), sample rate, VBV rate and buffer).
    public func violation(width: Int, height: Int, fps: Double, maxBitrate: Int?, bufferSize: Int?) -> String? {
        let samples = width * height
        if samples > maxLumaPictureSize { return "frame size \(width)x\(height) exceeds level \(name)" }
        let side = Double(8 * maxLumaPictureSize).squareRoot()
        if Double(width) > side || Double(height) > side { return "frame dimension \(width)x\(height) exceeds level \(name)" }
        if Double(samples) * fps > Double(maxLumaSampleRate) * 1.0001 {
            return "\(width)x\(height) at \(fps.formatted3) fps exceeds level \(name)'s sample rate"
        }
        if let maxBitrate, maxBitrate > maxBitrateKbps * 1000 { return "bitrate \(maxBitrate / 1000) kb/s exceeds level \(name)'s Main tier" }
        if let bufferSize, bufferSize > maxCPBKbits * 1000 { return "VBV buffer \(bufferSize / 1000) kbit exceeds level \(name)'s Main tier" }
        return nil
    }

    /// The lowest level whose Main tier carries the stream.
    public static func lowest(width: Int, height: Int, fps: Double, maxBitrate: Int?, bufferSize: Int?) -> HEVCLevel? {
        table.first { $0.violation(width: width, height: height, fps: fps, maxBitrate: maxBitrate, bufferSize: bufferSize) == nil }
    }
}
