import Testing
@testable import TesseraCore

/// A media segment built box by box (ISO 14496-12 8.8) and read back.
struct FragmentLayoutTests {
    static func u32(_ v: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) } }
    static func u64(_ v: UInt64) -> [UInt8] { u32(UInt32(v >> 32)) + u32(UInt32(truncatingIfNeeded: v)) }
    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] { u32(UInt32(8 + body.count)) + Array(type.utf8) + body }
    static func fullBox(_ type: String, version: UInt8 = 0, flags: UInt32, _ body: [UInt8]) -> [UInt8] {
        box(type, [version] + u32(flags).dropFirst() + body)
    }

    /// styp, then a moof with one traf (default-base-is-moof, tfdt v1, trun with data offset, first-sample flags,
    /// per-sample durations and sizes) for three samples, then their mdat.
    static func segment(tfhdFlags: UInt32 = 0x02_0000, firstFlags: UInt32 = 0x0200_0000) -> (bytes: [UInt8], moof: Int) {
        let styp = box("styp", Array("msdh".utf8) + u32(0) + Array("msdh".utf8))
        func moof(dataOffset: UInt32) -> [UInt8] {
            let tfhd = fullBox("tfhd", flags: tfhdFlags, u32(7) + (tfhdFlags & 1 != 0 ? u64(99) : []))
            let tfdt = fullBox("tfdt", version: 1, flags: 0, u64(123_456))
            let samples: [(UInt32, UInt32)] = [(512, 40), (512, 10), (1024, 20)]
            let trun = fullBox("trun", flags: 0x1 | 0x4 | 0x100 | 0x200,
                               u32(3) + u32(dataOffset) + u32(firstFlags) + samples.flatMap { u32($0.0) + u32($0.1) })
            return box("moof", fullBox("mfhd", flags: 0, u32(1)) + box("traf", tfhd + tfdt + trun))
        }
        let size = moof(dataOffset: 0).count
        let bytes = styp + moof(dataOffset: UInt32(size + 8)) + box("mdat", [UInt8](repeating: 0xAB, count: 70))
        return (bytes, styp.count)
    }

    @Test func readsTheFirstSampleAndTiming() throws {
        let (bytes, moofOffset) = Self.segment()
        let layout = try #require(FragmentLayout.parse(bytes))
        #expect(layout.boxes == ["styp", "moof", "mdat"])
        #expect(layout.moofOffset == moofOffset)
        let track = try #require(layout.track(7))
        #expect(track.baseDecodeTime == 123_456)
        #expect(track.sampleCount == 3 && track.duration == 2048)
        #expect(track.firstSampleSize == 40)
        #expect(track.firstSampleIsSync == true)
        // The first sample's data is the first byte of the mdat's payload.
        #expect(track.firstSampleOffset == bytes.count - 70)
    }

    @Test func nonSyncFirstSampleAndUnreadableSegments() {
        let nonSync = FragmentLayout.parse(Self.segment(firstFlags: 0x0101_0000).bytes)
        #expect(nonSync?.track(7)?.firstSampleIsSync == false)
        // An absolute base data offset points outside the segment: not read.
        #expect(FragmentLayout.parse(Self.segment(tfhdFlags: 0x1).bytes) == nil)
        // A box that runs past the end.
        #expect(FragmentLayout.parse(Array(Self.segment().bytes.dropLast())) == nil)
        #expect(FragmentLayout.parse([]) == nil)
    }
}
