import Testing
@testable import TesseraCore

@Suite struct SettingsTests {
    @Test func levelsFollowSizeRateAndBitrate() {
        #expect(H264Level.lowest(width: 1920, height: 1080, fps: 30, maxBitrate: nil, profile: "high")?.name == "4")
        #expect(H264Level.lowest(width: 1920, height: 1080, fps: 60, maxBitrate: nil, profile: "high")?.name == "4.2")
        #expect(H264Level.lowest(width: 1280, height: 720, fps: 30, maxBitrate: nil, profile: "high")?.name == "3.1")
        #expect(H264Level.lowest(width: 1920, height: 1080, fps: 30, maxBitrate: 40_000_000, profile: "high")?.name == "4.1")
        #expect(H264Level.lowest(width: 3840, height: 2160, fps: 30, maxBitrate: nil, profile: "high")?.name == "5.1")
        #expect(H264Level.named("3.0")?.idc == 30)
        #expect(H264Level.named("4.1")?.violation(width: 3840, height: 2160, fps: 30, maxBitrate: nil, profile: "high",
                                                  referenceFrames: 1) != nil)
    }

    @Test func invalidSettingsAreNamed() {
        #expect(throws: SettingsError.self) { try EncoderSettings(preset: "warp").validate() }
        #expect(throws: SettingsError.self) { try EncoderSettings(crf: 60).validate() }
        #expect(throws: SettingsError.self) { try EncoderSettings(maxrate: 1000).validate() }
        #expect(throws: SettingsError.self) { try EncoderSettings(level: "9.9").validate() }
        #expect(throws: Never.self) { try EncoderSettings().validate() }
    }

    @Test func rescaleRoundsLikeFFmpeg() {
        #expect(Rational(1, 90000).rescale(3003, to: Rational(1, 30000)) == 1001)
        #expect(Rational(1, 25).rescale(-1, to: Rational(1, 1000)) == -40)
        #expect(Rational(1, 3).rescale(1, to: Rational(1, 2)) == 1)
    }

    @Test func mp4BoxOrder() {
        func box(_ type: String, _ size: Int) -> [UInt8] {
            bigEndian32(size) + Array(type.utf8) + [UInt8](repeating: 0, count: size - 8)
        }
        let file = box("ftyp", 16) + box("moov", 40) + box("mdat", 100)
        let boxes = MP4Layout.topLevelBoxes(fileSize: Int64(file.count)) { offset, count in
            Array(file[Int(offset)..<min(file.count, Int(offset) + count)])
        }
        #expect(boxes == ["ftyp", "moov", "mdat"])
        #expect(MP4Layout.isFaststart(boxes))
        #expect(!MP4Layout.isFaststart(["ftyp", "mdat", "moov"]))
    }
}
