extension CodecString {
    /// `hvc1.P.C.Lnnn.Bx` (ISO/IEC 14496-15 Annex E) from an HEVCDecoderConfigurationRecord or Annex B VPS/SPS: the
    /// profile space and profile, the compatibility flags bit-reversed in hex, the tier and level, then the
    /// constraint-indicator bytes in hex with trailing zero bytes left out.
    public static func hevc(_ configuration: [UInt8]) throws(PackagingError) -> String {
        let ptl = try hevcProfileTierLevel(configuration)
        let space = ["", "A", "B", "C"][Int(ptl[0] >> 6)]
        let profile = Int(ptl[0] & 0x1F)
        let tier = ptl[0] & 0x20 != 0 ? "H" : "L"
        var flags: UInt32 = 0
        for byte in ptl[1...4] { flags = flags << 8 | UInt32(byte) }
        var constraints = Array(ptl[5...10])
        while constraints.last == 0 { constraints.removeLast() }
        var parts = ["hvc1", "\(space)\(profile)", String(reversedBits(flags), radix: 16, uppercase: true), "\(tier)\(ptl[11])"]
        parts += constraints.map(hex)
        return parts.joined(separator: ".")
    }

    /// The 12 bytes of general profile_tier_level (ITU-T H.265 7.3.3): from the record's bytes 1–12, or from the first
    /// VPS or SPS of Annex B data, emulation-prevention bytes removed.
    static func hevcProfileTierLevel(_ configuration: [UInt8]) throws(PackagingError) -> [UInt8] {
        func invalid(_ problem: String) -> PackagingError { PackagingError(.invalidCodecConfiguration, "HEVC configuration: \(problem)") }
        guard let first = configuration.first else { throw invalid("empty") }
        if first == 1 {
            guard configuration.count >= 23 else { throw invalid("hvcC record of \(configuration.count) bytes") }
            return Array(configuration[1...12])
        }
        for unit in annexBUnits(configuration) {
            // VPS (32): 2 header bytes, then 4 bytes before its profile_tier_level; SPS (33): 2, then 1.
            let type = (unit.first ?? 0) >> 1 & 0x3F
            guard type == 32 || type == 33 else { continue }
            let payload = removingEmulationPrevention(unit)
            let start = type == 32 ? 6 : 3
            guard payload.count >= start + 12 else { throw invalid("parameter set of \(payload.count) bytes") }
            return Array(payload[start..<(start + 12)])
        }
        throw invalid("neither an hvcC record nor a VPS or SPS")
    }

    /// The NAL units of Annex B data, each without its start code.
    static func annexBUnits(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var starts: [Int] = []
        var i = 0
        while i + 3 <= bytes.count {
            if bytes[i] == 0, bytes[i + 1] == 0, bytes[i + 2] == 1 {
                starts.append(i + 3)
                i += 3
            } else {
                i += 1
            }
        }
        return starts.enumerated().map { n, start in
            var end = n + 1 < starts.count ? starts[n + 1] - 3 : bytes.count
            while end > start, n + 1 < starts.count, bytes[end - 1] == 0 { end -= 1 }
            return bytes[start..<end]
        }
    }

    /// The RBSP of a NAL unit: each 0x03 after two zero bytes dropped.
    static func removingEmulationPrevention(_ unit: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        var zeros = 0
        for byte in unit {
            if zeros >= 2, byte == 3 { zeros = 0; continue }
            zeros = byte == 0 ? zeros + 1 : 0
            out.append(byte)
        }
        return out
    }

    static func reversedBits(_ value: UInt32) -> UInt32 {
        var value = value, reversed: UInt32 = 0
        for _ in 0..<32 {
            reversed = reversed << 1 | value & 1
            value >>= 1
        }
        return reversed
    }
}
