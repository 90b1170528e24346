import Foundation
import Testing
@testable import TesseraCore

/// `--codec`: each codec's own defaults, frozen with the job, and one line for an option a codec does not have.
struct CodecSettingsTests {
    func resolved(_ fill: (inout EncodingRequest) -> Void) throws(SettingsError) -> JobSpec {
        var request = EncodingRequest()
        fill(&request)
        return try request.resolved()
    }

    @Test func eachCodecTakesItsEncodersDefaults() throws {
        let h264 = try resolved { _ in }
        #expect(h264.settings.codec == nil && h264.settings.videoCodec == .h264, "H.264 settings read and digest as before")
        #expect(h264.settings.digest == EncoderSettings().digest)
        let hevc = try resolved { $0.codec = "hevc" }
        #expect(hevc.settings.codec == .hevc && hevc.settings.preset == "medium" && hevc.settings.crf == 28 && hevc.settings.profile == "main")
        #expect(hevc.settings.bframes == 4 && h264.settings.bframes == 3, "x265's B-frames at medium, x264's at its default")
        #expect(try resolved { $0.codec = "hevc"; $0.preset = "slower" }.settings.bframes == 8)
        #expect(try resolved { $0.codec = "hevc"; $0.preset = "superfast" }.settings.bframes == 3)
        #expect(try resolved { $0.codec = "hevc"; $0.bframes = 2 }.settings.bframes == 2)
        let av1 = try resolved { $0.codec = "av1" }
        #expect(av1.settings.encoderKeyint == true && hevc.settings.encoderKeyint == nil && h264.settings.encoderKeyint == nil)
        #expect(try resolved { $0.codec = "av1"; $0.keyint = 100 }.settings.encoderKeyint == nil, "a given --keyint stands")
        // SVT-AV1's default intra period through ffmpeg, as its keyframes fall in a whole-file encode.
        #expect([23.976, 25, 30, 50, 60, 120].map { VideoCodec.av1.defaultKeyint(framesPerSecond: $0) } == [161, 161, 161, 321, 321, 641])
        #expect(VideoCodec.hevc.defaultKeyint(framesPerSecond: 30) == nil && VideoCodec.h264.defaultKeyint(framesPerSecond: 30) == nil)
        #expect(av1.settings.codec == .av1 && av1.settings.preset == "10" && av1.settings.crf == 35 && av1.settings.effectiveBFrames == 0)
        #expect(av1.settings.leadInFrames == 0 && av1.settings.lookaheadFrames == 0, "no lead-in or run-out without forced key frames")
        // x265 converges after 10 flat frames at every preset with CU-tree, where a flat frame costs it a good share of a real one.
        #expect(try ["veryfast", "medium", "slow"].map { p in try resolved { $0.codec = "hevc"; $0.preset = p }.settings.leadInFrames } == [10, 10, 10])
        #expect(try resolved { $0.codec = "hevc"; $0.preset = "superfast" }.settings.leadInFrames == 0, "no CU-tree, no lead-in")
        #expect(try resolved { $0.codec = "hevc"; $0.profile = "main10" }.settings.tenBit)
        #expect(try resolved { $0.codec = "hevc"; $0.bitrate = "1M" }.settings.passes == 2, "x265's --bitrate runs two passes, as x264's")
        #expect(try resolved { $0.codec = "av1"; $0.bitrate = "1M" }.settings.passes == 2, "AV1's --bitrate runs two passes too")
        #expect(try resolved { $0.codec = "av1"; $0.bitrate = "1M"; $0.passes = 1 }.settings.passes == 1)
    }

    @Test func anOptionACodecLacksIsRefusedInOneLine() {
        let cases: [(String, (inout EncodingRequest) -> Void)] = [
            ("unknown --codec 'vp9'", { $0.codec = "vp9" }),
            ("--bframes does not apply to --codec av1", { $0.codec = "av1"; $0.bframes = 2 }),
            ("--level does not apply to --codec av1", { $0.codec = "av1"; $0.level = "4.1" }),
            ("--maxrate/--bufsize does not apply to --codec av1", { $0.codec = "av1"; $0.maxrate = "1M"; $0.bufsize = "2M" }),
            ("unknown --preset 'medium' for AV1", { $0.codec = "av1"; $0.preset = "medium" }),
            ("unknown --profile 'high' for HEVC", { $0.codec = "hevc"; $0.profile = "high" }),
            ("--crf must be a whole number between 1 and 63 for AV1", { $0.codec = "av1"; $0.crf = 20.5 }),
            ("unknown --level '4.4' for HEVC", { $0.codec = "hevc"; $0.level = "4.4" }),
            ("--two-pass makes H.264 rungs only", { $0.codec = "hevc"; $0.ladder = ["720"]; $0.twoPass = true }),
        ]
        for (message, fill) in cases {
            do {
                _ = try resolved(fill)
                Issue.record("accepted: \(message)")
            } catch {
                #expect(error.description.hasPrefix(message), "\(error.description)")
                #expect(!error.description.contains("\n"))
            }
        }
    }

    @Test func aRecipesH264ProfileAndLevelGiveWayToAnotherCodec() throws {
        var commandLine = EncodingRequest()
        commandLine.recipe = "mobile"
        commandLine.codec = "hevc"
        let spec = try Recipe.stack(file: nil, commandLine: commandLine).resolved()
        #expect(spec.settings.profile == "main" && spec.settings.level == nil && spec.settings.keyint == 30)
        commandLine.codec = nil
        #expect(try Recipe.stack(file: nil, commandLine: commandLine).resolved().settings.level == "4.1")
    }

    @Test func settingsFilesNameTheCodec() throws {
        let request = try JSONDecoder().decode(EncodingRequest.self, from: Data(#"{"codec": "av1", "crf": 30, "preset": 8}"#.utf8))
        let settings = try request.resolved().settings
        #expect(settings.codec == .av1 && settings.crf == 30 && settings.preset == "8")
        let stored = try JSONDecoder().decode(EncoderSettings.self, from: JSONEncoder().encode(settings))
        #expect(stored == settings)
    }

    @Test func ffmpegsEncoderNamesPointToTheCodec() {
        #expect(FFmpegHabits.hint(for: "-c:v", value: "libx265", command: "transcode") == "use --codec hevc")
        #expect(FFmpegHabits.hint(for: "-c:v", value: "libsvtav1", command: "transcode") == "use --codec av1")
        #expect(FFmpegHabits.hint(for: "-vcodec", value: "libvpx-vp9", command: "transcode") == "use --codec h264, --codec hevc or --codec av1")
    }

    @Test func av1StartsOnlyOnAShownKeyFrameWithItsSequenceHeader() {
        // OBU headers with sizes: temporal delimiter, sequence header (payload elided), frame with a first byte.
        func unit(sequenceHeader: Bool, frameByte: UInt8) -> [UInt8] {
            var bytes: [UInt8] = [0x12, 0x00]
            if sequenceHeader { bytes += [0x0A, 0x02, 0xAA, 0xBB] }
            return bytes + [0x32, 0x02, frameByte, 0x00]
        }
        func starts(_ bytes: [UInt8]) -> Bool {
            bytes.withUnsafeBytes { SegmentStart.isDecoderStart($0, codec: .av1, extradata: []) }
        }
        #expect(starts(unit(sequenceHeader: true, frameByte: 0x10)), "KEY_FRAME, shown")
        #expect(!starts(unit(sequenceHeader: false, frameByte: 0x10)), "no sequence header")
        #expect(!starts(unit(sequenceHeader: true, frameByte: 0x30)), "INTER_FRAME")
        #expect(!starts(unit(sequenceHeader: true, frameByte: 0x00)), "a key frame not shown (forward key frame)")
        #expect(!starts(unit(sequenceHeader: true, frameByte: 0x80)), "show_existing_frame")
    }
}
