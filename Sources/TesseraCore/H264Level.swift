/// H.264 level limits (Table A-1), used to pin one level for every segment of a job: x264's automatic
/// choice depends on the rate control and could differ between segments.
public struct H264Level: Sendable, Hashable {
    public let name: String
    /// level_idc as x264 and libavcodec take it (41 for 4.1).
    public let idc: Int
    let maxMacroblocksPerSecond: Int
    let maxFrameMacroblocks: Int
    /// kbit/s for Baseline/Main; High allows 1.25 times this.
    let maxBitrateKbps: Int
    let maxDPBMacroblocks: Int

    public static let table: [H264Level] = [
        .init(name: "1", idc: 10, maxMacroblocksPerSecond: 1485, maxFrameMacroblocks: 99, maxBitrateKbps: 64, maxDPBMacroblocks: 396),
        .init(name: "1.1", idc: 11, maxMacroblocksPerSecond: 3000, maxFrameMacroblocks: 396, maxBitrateKbps: 192, maxDPBMacroblocks: 900),
        .init(name: "1.2", idc: 12, maxMacroblocksPerSecond: 6000, maxFrameMacroblocks: 396, maxBitrateKbps: 384, maxDPBMacroblocks: 2376),
        .init(name: "1.3", idc: 13, maxMacroblocksPerSecond: 11880, maxFrameMacroblocks: 396, maxBitrateKbps: 768, maxDPBMacroblocks: 2376),
        .init(name: "2", idc: 20, maxMacroblocksPerSecond: 11880, maxFrameMacroblocks: 396, maxBitrateKbps: 2000, maxDPBMacroblocks: 2376),
        .init(name: "2.1", idc: 21, maxMacroblocksPerSecond: 19800, maxFrameMacroblocks: 792, maxBitrateKbps: 4000, maxDPBMacroblocks: 4752),
        .init(name: "2.2", idc: 22, maxMacroblocksPerSecond: 20250, maxFrameMacroblocks: 1620, maxBitrateKbps: 4000, maxDPBMacroblocks: 8100),
        .init(name: "3", idc: 30, maxMacroblocksPerSecond: 40500, maxFrameMacroblocks: 1620, maxBitrateKbps: 10000, maxDPBMacroblocks: 8100),
        .init(name: "3.1", idc: 31, maxMacroblocksPerSecond: 108000, maxFrameMacroblocks: 3600, maxBitrateKbps: 14000, maxDPBMacroblocks: 18000),
        .init(name: "3.2", idc: 32, maxMacroblocksPerSecond: 216000, maxFrameMacroblocks: 5120, maxBitrateKbps: 20000, maxDPBMacroblocks: 20480),
        .init(name: "4", idc: 40, maxMacroblocksPerSecond: 245760, maxFrameMacroblocks: 8192, maxBitrateKbps: 20000, maxDPBMacroblocks: 32768),
        .init(name: "4.1", idc: 41, maxMacroblocksPerSecond: 245760, maxFrameMacroblocks: 8192, maxBitrateKbps: 50000, maxDPBMacroblocks: 32768),
        .init(name: "4.2", idc: 42, maxMacroblocksPerSecond: 522240, maxFrameMacroblocks: 8704, maxBitrateKbps: 50000, maxDPBMacroblocks: 34816),
        .init(name: "5", idc: 50, maxMacroblocksPerSecond: 589824, maxFrameMacroblocks: 22080, maxBitrateKbps: 135000, maxDPBMacroblocks: 110400),
        .init(name: "5.1", idc: 51, maxMacroblocksPerSecond: 983040, maxFrameMacroblocks: 36864, maxBitrateKbps: 240000, maxDPBMacroblocks: 184320),
        .init(name: "5.2", idc: 52, maxMacroblocksPerSecond: 2073600, maxFrameMacroblocks: 36864, maxBitrateKbps: 240000, maxDPBMacroblocks: 184320),
        .init(name: "6", idc: 60, maxMacroblocksPerSecond: 4177920, maxFrameMacroblocks: 139264, maxBitrateKbps: 240000, maxDPBMacroblocks: 696320),
        .init(name: "6.1", idc: 61, maxMacroblocksPerSecond: 8355840, maxFrameMacroblocks: 139264, maxBitrateKbps: 480000, maxDPBMacroblocks: 696320),
        .init(name: "6.2", idc: 62, maxMacroblocksPerSecond: 16711680, maxFrameMacroblocks: 139264, maxBitrateKbps: 800000, maxDPBMacroblocks: 696320),
    ]

    public static func named(_ name: String) -> H264Level? {
        let trimmed = name.hasSuffix(".0") ? String(name.dropLast(2)) : name
        return table.first { $0.name == trimmed || String($0.idc) == trimmed }
    }

    /// Why this level cannot carry the stream, or nil when it can.
    public func violation(width: Int, height: Int, fps: Double, maxBitrate: Int?, profile: String,
                          referenceFrames: Int) -> String? {
        let mbWidth = (width + 15) / 16, mbHeight = (height + 15) / 16
        let frameMBs = mbWidth * mbHeight
        if frameMBs > maxFrameMacroblocks { return "frame size \(width)x\(height) exceeds level \(name)" }
        let side = Int((Double(8 * maxFrameMacroblocks)).squareRoot())
        if mbWidth > side || mbHeight > side { return "frame dimension \(width)x\(height) exceeds level \(name)" }
        if Double(frameMBs) * fps > Double(maxMacroblocksPerSecond) * 1.0001 {
            return "\(width)x\(height) at \(fps.formatted3) fps exceeds level \(name)'s macroblock rate"
        }
        if let maxBitrate {
            let factor = profile == "high10" ? 3000 : profile == "high" ? 1250 : 1000
            if maxBitrate > maxBitrateKbps * factor { return "bitrate \(maxBitrate / 1000) kb/s exceeds level \(name)" }
        }
        if frameMBs * referenceFrames > maxDPBMacroblocks { return "\(referenceFrames) reference frames exceed level \(name)'s DPB" }
        return nil
    }

    /// The lowest level that carries the stream.
    public static func lowest(width: Int, height: Int, fps: Double, maxBitrate: Int?, profile: String,
                              referenceFrames: Int = 4) -> H264Level? {
        table.first {
            $0.violation(width: width, height: height, fps: fps, maxBitrate: maxBitrate, profile: profile,
                         referenceFrames: referenceFrames) == nil
        }
    }
}

extension Double {
    public var formatted3: String {
        let scaled = (self * 1000).rounded() / 1000
        return scaled == scaled.rounded() ? String(Int(scaled)) : String(scaled)
    }
}
