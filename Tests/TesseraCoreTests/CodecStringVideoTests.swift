import Testing
@testable import TesseraCore

/// HEVC and AV1 codec strings from headers libx265 and SVT-AV1 wrote, with the profile and level ffprobe read from
/// the same streams.
@Suite struct CodecStringVideoTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    @Test func hevcFromAnnexBHeadersAndFromAnHvcCRecord() throws {
        // x265's VPS/SPS/PPS at 320x180 with level-idc 2.1: Main, level_idc 63 (ffprobe), emulation prevention inside.
        let annexB = Self.bytes("0000000140010c01ffff01600000030090000003000003003f9594090000000142010101600000030090000003000003003fa00a080c1f3e595952930bc05a020000030002000003003210000000014401c073c189")
        #expect(try CodecString.hevc(annexB) == "hvc1.1.6.L63.90")
        // The SPS alone says the same.
        #expect(try CodecString.hevc(Array(annexB[29...])) == "hvc1.1.6.L63.90")
        // An hvcC record's first bytes from a Main 10 encode: level_idc 60 (ffprobe), compatible with Main 10 only.
        let record = Self.bytes("0102200000009000000000003cf000fcfdfafa00000f04")
        #expect(try CodecString.hevc(record) == "hvc1.2.4.L60.90")
        #expect(try CodecString.video(.hevc, record) == "hvc1.2.4.L60.90")
        // High tier and a profile space show as H and a letter.
        var high = record
        high[1] = 0x80 | 0x20 | 0x01
        #expect(try CodecString.hevc(high) == "hvc1.B1.4.H60.90")
        #expect(throws: PackagingError.self) { try CodecString.hevc(Array(record.prefix(10))) }
        #expect(throws: PackagingError.self) { try CodecString.hevc(Self.bytes("000000014401c073c189")) }
    }

    @Test func av1FromAnAv1CRecordAndFromASequenceHeader() throws {
        // A temporal delimiter and SVT-AV1's sequence header at 1280x720: Main, seq_level_idx 5 (ffprobe), 8 bits.
        let obus = Self.bytes("12000a0b0000002d4cffb3cfbf900432d8b6")
        #expect(try CodecString.av1(obus) == "av01.0.05M.08")
        // An av1C record of a 10-bit encode at 320x180: level 0; its sequence header says 10 bits too.
        let record = Self.bytes("81004c000a0b000000043cfecc02f84040")
        #expect(try CodecString.av1(record) == "av01.0.00M.10")
        #expect(try CodecString.av1(Array(record[4...])) == "av01.0.00M.10")
        #expect(try CodecString.video(.av1, record) == "av01.0.00M.10")
        #expect(throws: PackagingError.self) { try CodecString.av1(Self.bytes("1200")) }
        #expect(throws: PackagingError.self) { try CodecString.av1(Self.bytes("0a0b0000")) }
    }

    @Test func hevcLevelsFitTheRungAndItsBuffer() {
        #expect(HEVCLevel.lowest(width: 1920, height: 1080, fps: 30, maxBitrate: 6_000_000, bufferSize: 12_000_000)?.name == "4")
        #expect(HEVCLevel.lowest(width: 1920, height: 1080, fps: 60, maxBitrate: 6_000_000, bufferSize: 12_000_000)?.name == "4.1")
        #expect(HEVCLevel.lowest(width: 1280, height: 720, fps: 30, maxBitrate: 3_000_000, bufferSize: 6_000_000)?.name == "3.1")
        // The buffer alone lifts 720p from 3.1 to 4.
        #expect(HEVCLevel.lowest(width: 1280, height: 720, fps: 30, maxBitrate: 5_500_000, bufferSize: 11_000_000)?.name == "4")
        #expect(HEVCLevel.named("4.1")?.idc == 123 && HEVCLevel.named("6.2")?.idc == 186)
        #expect(HEVCLevel.lowest(width: 8192, height: 8192, fps: 120, maxBitrate: nil, bufferSize: nil) == nil)
    }
}
