import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

/// `--codec hevc` and `--codec av1` on the inputs the H.264 tests cut: every frame once, clean decodes, `hvc1`,
/// Main10, and a verifier that refuses a segment starting where a decoder cannot start. Fastest presets, small sizes.
@Suite(.serialized) struct CodecTests {
    static let kinds: [SourceKind] = [.closedGOPWithBFrames, .openGOP, .hevc, .mpegTSWithStartOffset, .variableFrameRate, .prores]

    static func options(_ codec: VideoCodec, preset: String? = nil, profile: String = "main") -> JobOptions {
        var settings = EncoderSettings(preset: preset ?? (codec == .av1 ? "13" : "ultrafast"), crf: codec.defaultCRF, profile: profile)
        settings.codec = codec
        return JobOptions(settings: settings, segmentSeconds: 1, workers: 2)
    }

    static func stream(_ path: String) throws -> [String: String] {
        let text = try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "stream=codec_tag_string,profile,pix_fmt,width,height",
                                     "-of", "default=nw=1", path])
        return Dictionary(text.split(whereSeparator: \.isNewline).map { $0.split(separator: "=", maxSplits: 1).map(String.init) }
            .filter { $0.count == 2 }.map { ($0[0], $0[1]) }, uniquingKeysWith: { a, _ in a })
    }

    @Test(arguments: kinds, [VideoCodec.hevc, .av1])
    func everySourceFrameAppearsOnceInOrder(_ kind: SourceKind, _ codec: VideoCodec) throws {
        let source = try kind.make()
        let output = Fixtures.output("\(kind.rawValue)-\(codec.rawValue).mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let report = try LocalTranscoder().transcode(input: source, output: output, options: Self.options(codec))
        #expect(report.plan.cuts.segments.count >= 3, "a segmented plan, not one piece")
        let check = try FrameCheck.compare(source: source, output: output, width: 320, height: 240)
        #expect(check.sourceFrames > 0 && check.outputFrames == check.sourceFrames)
        #expect(check.minimumPSNR > FrameCheck.psnrFloor, "a dropped, repeated or shifted frame scores below the floor")
        #expect(check.maximumTimestampDrift < 0.001)
        let facts = try OutputFacts.read(output)
        #expect(facts.countedFrames == check.sourceFrames)
        #expect(facts.codecs == (kind.hasAudio ? [codec.rawValue, "aac"] : [codec.rawValue]))
        #expect(facts.moovBeforeMdat)
        #expect(facts.decodeErrors.isEmpty, "ffmpeg -v error printed: \(facts.decodeErrors)")
        #expect(try Self.stream(output)["codec_tag_string"] == (codec == .hevc ? "hvc1" : "av01"))
    }

    /// A segment at an extra cut is encoded without scene cuts; its HEVC headers are still every other segment's
    /// (x265's options SEI, which would name `scenecut=0`, is not written into them).
    @Test func hevcHeadersDoNotDependOnASegmentsSceneCuts() throws {
        // Past ultrafast (which has no scene cuts of its own).
        let plan = try JobPlanner.plan(try MediaProbe.probe(try SourceKind.closedGOPWithBFrames.make()),
                                       options: Self.options(.hevc, preset: "veryfast"))
        var tasks: [SegmentTask] = []
        try SegmentSource(plan: plan).forEachTask { tasks.append($0) }
        var task = try #require(tasks.last)
        let headers = try [nil, false, true].map { (cuts: Bool?) in
            task.header.sceneCuts = cuts
            return try SegmentEncoder.encode(task).header.extradata
        }
        #expect(headers[0] == headers[1] && headers[1] == headers[2] && !headers[0].isEmpty)
    }

    /// x265 past ultrafast gets the lead-in (its first kept frame a forced IDR) and the run-out.
    @Test func hevcWithLeadInAndRunOutJoinsCleanly() throws {
        let source = try SourceKind.closedGOPWithBFrames.make()
        let output = Fixtures.output("hevc-lead-in.mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let report = try LocalTranscoder().transcode(input: source, output: output, options: Self.options(.hevc, preset: "veryfast"))
        let later = report.plan.cuts.segments.dropFirst()
        #expect(later.contains { report.plan.leadIn(of: $0) ?? 0 > 0 } && later.contains { report.plan.runOut(after: $0) != nil })
        let check = try FrameCheck.compare(source: source, output: output, width: 320, height: 240)
        #expect(check.outputFrames == check.sourceFrames && check.minimumPSNR > FrameCheck.psnrFloor)
        #expect(try OutputFacts.read(output).decodeErrors.isEmpty)
    }

    /// A rotated, odd-sized source: upright and even in both codecs.
    @Test(arguments: [VideoCodec.hevc, .av1])
    func rotatedOddSizedSource(_ codec: VideoCodec) throws {
        // 4:4:4 keeps the odd size; the rotation goes on by stream copy (an encode drops it).
        let odd = try Fixtures.media("odd.mp4", Fixtures.lavfi.prefix(4) + ["-t", "4", "-vf", "scale=241:179", "-c:v", "libx264",
                                                                            "-pix_fmt", "yuv444p", "-preset", "veryfast", "-g", "25"])
        let source = try Fixtures.media("odd-rotated.mp4", ["-i", odd, "-c", "copy", "-metadata:s:v:0", "rotate=90"])
        let output = Fixtures.output("odd-rotated-\(codec.rawValue).mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let report = try LocalTranscoder().transcode(input: source, output: output, options: Self.options(codec))
        #expect(report.verification.frames == 100)
        let video = try Self.stream(output)
        #expect(video["width"] == "178" && video["height"] == "240")
        #expect(try OutputFacts.read(output).decodeErrors.isEmpty)
    }

    /// `--profile main10` from the 10-bit 4:2:2 ProRes source: HEVC Main 10, AV1 Main at 10 bits.
    @Test(arguments: [VideoCodec.hevc, .av1])
    func main10FromATenBitSource(_ codec: VideoCodec) throws {
        let source = try SourceKind.prores.make()
        let output = Fixtures.output("main10-\(codec.rawValue).mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        _ = try LocalTranscoder().transcode(input: source, output: output, options: Self.options(codec, profile: "main10"))
        let video = try Self.stream(output)
        #expect(video["pix_fmt"] == "yuv420p10le")
        #expect(video["profile"] == (codec == .hevc ? "Main 10" : "Main"))
        #expect(try OutputFacts.read(output).decodeErrors.isEmpty)
    }

    /// SVT-AV1 through libavcodec 5.1 places no key frame at a scene cut, only on its interval's cadence: an AV1 job's
    /// key frames are a whole-file `ffmpeg -c:v libsvtav1` encode's, not the scene cuts an H.264 forecast would pick.
    @Test func av1KeyFramesAreTheWholeFileEncodes() throws {
        let source = try Fixtures.media("av1-scenes.mp4", ["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25:duration=5",
                                                           "-f", "lavfi", "-i", "mandelbrot=size=160x96:rate=25:end_scale=0.8",
                                                           "-f", "lavfi", "-i", "smptebars=size=160x96:rate=25:duration=5",
                                                           "-filter_complex", "[1:v]trim=duration=4,setpts=PTS-STARTPTS[m];[0:v][m][2:v]concat=n=3:v=1[v]",
                                                           "-map", "[v]", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25"])
        func keyFrames(_ path: String) throws -> [Int] {
            let flags = try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "packet=flags", "-of", "csv=p=0", path])
            return flags.split(whereSeparator: \.isNewline).enumerated().compactMap { $1.hasPrefix("K") ? $0 : nil }
        }
        let whole = Fixtures.output("av1-scenes-ffmpeg.mp4")
        let made = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", source, "-c:v", "libsvtav1", "-preset", "13",
                                           "-crf", "35", whole])
        try #require(made.status == 0, "\(made.stderr)")
        var options = Self.options(.av1)
        options.segmentSeconds = nil
        options.settings.encoderKeyint = true
        let output = Fixtures.output("av1-scenes.mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let report = try LocalTranscoder().transcode(input: source, output: output, options: options)
        let expected = try keyFrames(whole)
        #expect(expected == [0, 161, 322], "SVT-AV1's cadence at 25 fps, whatever the scenes: \(expected)")
        #expect(try keyFrames(output) == expected, "segments at \(report.plan.cuts.segments.map(\.frameCount))")
    }

    /// The verifier's segment-start check on files ffmpeg makes: a claimed segment start on a CRA (x265's default
    /// keyframe), a P-frame, or an AV1 inter frame fails; the encode's first frame passes.
    @Test(arguments: [VideoCodec.h264, .hevc, .av1])
    func aSegmentStartADecoderCannotStartFromFailsVerification(_ codec: VideoCodec) throws {
        let options: [String] = switch codec {
        case .h264: ["-c:v", "libx264", "-preset", "ultrafast", "-g", "250"]
        case .hevc: ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "keyint=10:min-keyint=10:log-level=error"]
        case .av1: ["-c:v", "libsvtav1", "-preset", "13", "-g", "250"]
        }
        let path = try Fixtures.media("starts-\(codec.rawValue).mp4", ["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25", "-t", "1"] + options
                                                                                             + ["-movflags", "+faststart"])
        var expected = Verifier.Expectation(frameCount: 25, videoDurationSeconds: 1, frameSeconds: 0.04, width: 160, height: 96,
                                            rotated: false, audio: nil, codec: codec, segmentStarts: [0])
        #expect(try Verifier.verify(path, expected).frames == 25)
        // x265's keyframe at frame 10 is a CRA: flagged a keyframe in the MP4, yet no place to start a segment.
        expected.segmentStarts = [0, 10]
        #expect {
            _ = try Verifier.verify(path, expected)
        } throws: { error in
            (error as? TesseraError)?.kind == .verification
        }
    }
}

/// Inputs of one and two frames: an encoder that has a frame to give back only once flushed.
@Suite(.serialized) struct TinyInputCodecTests {
    @Test(arguments: [1, 2], [VideoCodec.h264, .hevc, .av1])
    func aClipOfOneOrTwoFramesTranscodes(_ frames: Int, _ codec: VideoCodec) throws {
        let source = try Fixtures.media("tiny-\(frames).mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-frames:v", "\(frames)",
                                                              "-c:v", "libx264", "-preset", "veryfast"])
        let output = Fixtures.output("tiny-\(frames)-\(codec.rawValue).mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        var options = CodecTests.options(codec, preset: codec == .av1 ? nil : "medium")
        if codec == .h264 { options.settings.codec = .h264 }
        _ = try LocalTranscoder().transcode(input: source, output: output, options: options)
        let facts = try OutputFacts.read(output)
        #expect(facts.countedFrames == frames)
        #expect(facts.decodeErrors.isEmpty, "ffmpeg -v error printed: \(facts.decodeErrors)")
    }
}
