import Testing
@testable import TesseraCore

@Suite struct RandomAccessTests {
    let avcC: [UInt8] = [1, 0x64, 0, 0x1F, 0xFF, 0xE1, 0]

    func lengthPrefixed(_ nals: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for nal in nals {
            out += bigEndian32(nal.count)
            out += nal
        }
        return out
    }

    func classify(_ c: RandomAccessClassifier, _ bytes: [UInt8], key: Bool) -> RandomAccess {
        bytes.withUnsafeBytes { c.classify($0, keyFlag: key) }
    }

    @Test func h264IDRIsClosed() {
        let c = RandomAccessClassifier(codecName: "h264", intraOnly: false, extradata: avcC)
        #expect(c.nalLengthSize == 4)
        #expect(classify(c, lengthPrefixed([[0x65, 0x88, 0x84]]), key: true) == .idr)
    }

    @Test func h264KeyFlaggedIWithoutRecoverySEIIsNotRandomAccess() {
        let c = RandomAccessClassifier(codecName: "h264", intraOnly: false, extradata: avcC)
        // Non-IDR slice (type 1), first_mb 0 (1), slice_type 7 = I (0001000) → bits 1 0001000.
        let iSlice: [UInt8] = [0x41, 0b1000_1000, 0x00]
        #expect(classify(c, lengthPrefixed([iSlice]), key: true) == .none)
        // With a recovery-point SEI (payload type 6) it is an open-GOP entry.
        let sei: [UInt8] = [0x06, 0x06, 0x01, 0xC4, 0x80]
        #expect(classify(c, lengthPrefixed([sei, iSlice]), key: true) == .openGOP)
        // A P-slice with the SEI is not (slice_type 5 = P → 00110).
        let pSlice: [UInt8] = [0x41, 0b1001_1000, 0x00]
        #expect(classify(c, lengthPrefixed([sei, pSlice]), key: false) == .none)
    }

    @Test func annexBStartCodes() {
        let c = RandomAccessClassifier(codecName: "h264", intraOnly: false, extradata: [])
        #expect(c.nalLengthSize == nil)
        let stream: [UInt8] = [0, 0, 0, 1, 0x09, 0xF0, 0, 0, 1, 0x67, 0x64, 0, 0, 0, 1, 0x65, 0x88]
        #expect(classify(c, stream, key: true) == .idr)
        let nonIDR: [UInt8] = [0, 0, 1, 0x09, 0xF0, 0, 0, 1, 0x41, 0x9A]
        #expect(classify(c, nonIDR, key: false) == .none)
    }

    @Test func hevcTypes() {
        let c = RandomAccessClassifier(codecName: "hevc", intraOnly: false, extradata: [])
        func nal(_ type: UInt8) -> [UInt8] { [0, 0, 1, type << 1, 1, 0xAF] }
        #expect(classify(c, nal(19), key: true) == .idr)
        #expect(classify(c, nal(20), key: true) == .idr)
        #expect(classify(c, nal(21), key: true) == .openGOP)
        #expect(classify(c, nal(16), key: true) == .openGOP)
        #expect(classify(c, nal(1), key: false) == .none)
    }

    @Test func intraOnlyAndOtherCodecs() {
        let prores = RandomAccessClassifier(codecName: "prores", intraOnly: true, extradata: [])
        #expect(classify(prores, [1, 2, 3], key: true) == .intra)
        let vp9 = RandomAccessClassifier(codecName: "vp9", intraOnly: false, extradata: [])
        #expect(classify(vp9, [1, 2, 3], key: true) == .keyframe)
        #expect(classify(vp9, [1, 2, 3], key: false) == .none)
    }

    @Test func emulationPreventionIsRemoved() {
        let bytes: [UInt8] = [0x41, 0, 0, 3, 1, 0, 0, 3, 0]
        let rbsp = bytes.withUnsafeBytes { RandomAccessClassifier.rbsp($0, skipping: 1) }
        #expect(rbsp == [0, 0, 1, 0, 0, 0])
    }
}
