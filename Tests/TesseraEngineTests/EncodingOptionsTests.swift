import Foundation
import Testing
import TesseraTestSupport

/// Every encoding option end to end through `tessera transcode` (embedded PostgreSQL, coordinator,
/// worker processes), checked with ffprobe and ffmpeg.
@Suite(.serialized) struct EncodingOptionsTests {
    let binary = Tool.tesseraBinary
    /// One embedded job store for the suite, stopped when the test process exits.
    static let dataDir: String = {
        atexit { _ = try? Tool.run(Tool.tesseraBinary, ["db", "stop", "--force", "--data-dir", EncodingOptionsTests.dataDirPath]) }
        return dataDirPath
    }()
    static let dataDirPath = Fixtures.directory.appendingPathComponent("options-db").path

    /// 320x240 at 25 fps, 4 s, GOP 25, AAC stereo: 100 frames.
    static func plain() throws -> String {
        try Fixtures.media("opt-plain.mp4", Fixtures.lavfi + ["-t", "4", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-c:a", "aac"])
    }

    /// Runs `tessera transcode` into a fresh output; the caller removes it.
    func transcode(_ source: String, _ args: [String], dataDir: String = Self.dataDir) throws -> (Tool.Output, String) {
        let output = Fixtures.output("opt.mp4")
        let result = try Tool.run(binary, ["transcode", source, "-o", output, "--preset", "veryfast", "--segment-seconds", "1",
                                           "--workers", "2", "--data-dir", dataDir] + args)
        return (result, output)
    }

    /// Transcodes and requires success.
    func transcoded(_ source: String, _ args: [String]) throws -> String {
        let (result, output) = try transcode(source, args)
        try #require(result.status == 0, "\(args): \(result.stderr)")
        return output
    }

    /// The first stream of `kind` as ffprobe reports it (frames counted).
    static func stream(_ path: String, _ kind: String) throws -> [String: Any] {
        let text = try Tool.ffprobe(["-count_frames", "-select_streams", kind == "video" ? "v:0" : "a:0", "-show_streams",
                                     "-of", "json", path])
        let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        return try #require((json?["streams"] as? [[String: Any]])?.first)
    }

    static func int(_ stream: [String: Any], _ key: String) -> Int {
        (stream[key] as? Int) ?? Int(stream[key] as? String ?? "") ?? -1
    }

    static func hasRotation(_ stream: [String: Any]) -> Bool {
        ((stream["side_data_list"] as? [[String: Any]]) ?? []).contains { $0["side_data_type"] as? String == "Display Matrix" }
    }

    /// Per-frame PSNR of `output` against ffmpeg's own rendering of `source` through `filter`:
    /// the minimum over frames, and the frame counts compared. ffmpeg applies the source's rotation itself.
    static func psnr(_ output: String, _ source: String, filter: String = "null") throws -> Double {
        try Tool.psnr(output, source, lavfi: "[1:v]\(filter)[ref];[0:v][ref]psnr=shortest=0").minimum
    }

    /// Key frames' positions among the video packets.
    static func keyframePositions(_ path: String) throws -> [Int] {
        let flags = try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "packet=flags", "-of", "csv=p=0", path])
            .split(whereSeparator: \.isNewline)
        return flags.enumerated().filter { $0.element.hasPrefix("K") }.map(\.offset)
    }

    // MARK: orientation

    @Test func rotationIsAppliedToThePixels() throws {
        let rotated = try Fixtures.media("opt-rotated.mp4", ["-i", try Self.plain(), "-c", "copy", "-metadata:s:v:0", "rotate=90"])
        let upright = try transcoded(rotated, [])
        defer { try? FileManager.default.removeItem(atPath: upright) }
        let video = try Self.stream(upright, "video")
        #expect(Self.int(video, "width") == 240 && Self.int(video, "height") == 320)
        #expect(!Self.hasRotation(video), "no rotation metadata once the pixels are upright")
        #expect(Self.int(video, "nb_read_frames") == 100)
        #expect(try Self.psnr(upright, rotated) >= 35, "matches ffmpeg's autorotated picture")

        let poster = Fixtures.output("kept.png")
        let kept = try transcoded(rotated, ["--rotate", "none", "--thumbnail", poster])
        defer { for f in [kept, poster] { try? FileManager.default.removeItem(atPath: f) } }
        let keptVideo = try Self.stream(kept, "video")
        #expect(Self.int(keptVideo, "width") == 320 && Self.hasRotation(keptVideo), "--rotate none keeps pixels and metadata")
        let image = try Self.stream(poster, "video")
        #expect(Self.int(image, "width") == 240 && Self.int(image, "height") == 320, "the thumbnail is upright all the same")
    }

    @Test(arguments: [
        (["--mirror", "horizontal"], "hflip", 320),
        (["--mirror", "vertical"], "vflip", 320),
        (["--rotate", "90", "--mirror", "horizontal"], "transpose=clock,hflip", 240),
        (["--rotate", "270"], "transpose=cclock", 240),
        (["--rotate", "180", "--mirror", "horizontal,vertical"], "null", 320),
    ])
    func rotateAndMirrorMatchFFmpegFilters(args: [String], filter: String, width: Int) throws {
        let output = try transcoded(try Self.plain(), args)
        defer { try? FileManager.default.removeItem(atPath: output) }
        let video = try Self.stream(output, "video")
        #expect(Self.int(video, "width") == width)
        #expect(Self.int(video, "nb_read_frames") == 100)
        #expect(try Self.psnr(output, try Self.plain(), filter: filter) >= 35, "\(args) against ffmpeg's \(filter)")
    }

    // MARK: size and frame rate

    @Test func sizeAndMaxSize() throws {
        let exact = try transcoded(try Self.plain(), ["--size", "160x96", "--scaler", "lanczos"])
        defer { try? FileManager.default.removeItem(atPath: exact) }
        var video = try Self.stream(exact, "video")
        #expect(Self.int(video, "width") == 160 && Self.int(video, "height") == 96)
        #expect(Self.int(video, "nb_read_frames") == 100)
        #expect(try Self.psnr(exact, try Self.plain(), filter: "scale=160:96:flags=lanczos") >= 33)

        let boxed = try transcoded(try Self.plain(), ["--max-size", "200x200"])
        defer { try? FileManager.default.removeItem(atPath: boxed) }
        video = try Self.stream(boxed, "video")
        #expect(Self.int(video, "width") == 200 && Self.int(video, "height") == 150, "aspect ratio kept, even sizes")

        let roomy = try transcoded(try Self.plain(), ["--max-size", "1920x1080"])
        defer { try? FileManager.default.removeItem(atPath: roomy) }
        video = try Self.stream(roomy, "video")
        #expect(Self.int(video, "width") == 320 && Self.int(video, "height") == 240, "never enlarged")
    }

    @Test func frameRateConversionKeepsTimeAndAudio() throws {
        let output = try transcoded(try Self.plain(), ["--fps", "30"])
        defer { try? FileManager.default.removeItem(atPath: output) }
        let video = try Self.stream(output, "video")
        #expect(Self.int(video, "nb_read_frames") == 120, "4 s at 30 fps")
        #expect(video["avg_frame_rate"] as? String == "30/1")
        // Each tick shows the frame on screen then: ffmpeg's fps filter rounding up.
        #expect(try Self.psnr(output, try Self.plain(), filter: "fps=30:round=up") >= 35)
        let facts = try OutputFacts.read(output)
        #expect(abs(facts.videoDuration - 4) < 0.001)
        #expect(abs((facts.audioDuration ?? 0) - facts.videoDuration) < 0.05, "audio keeps its length")
        #expect(abs((facts.audioStart ?? 1) - facts.videoStart) < 0.03)

        let ntsc = try transcoded(try Self.plain(), ["--fps", "29.97"])
        defer { try? FileManager.default.removeItem(atPath: ntsc) }
        let slower = try Self.stream(ntsc, "video")
        #expect(slower["r_frame_rate"] as? String == "30000/1001")
        #expect(Self.int(slower, "nb_read_frames") == 120, "ceil(4 s × 29.97)")
    }

    // MARK: rate control, keyframes, profile and level

    /// Rate control is per segment, so it is measured on 4 s segments of a 12 s clip against ffmpeg's
    /// whole-file encode with the same options; `--bitrate` alone runs two passes.
    @Test func rateControlModes() throws {
        let source = try Fixtures.media("opt-12s.mp4", Fixtures.lavfi + ["-t", "12", "-c:v", "libx264", "-preset", "ultrafast",
                                                                        "-g", "25", "-c:a", "aac"])
        func kbps(_ path: String) throws -> Double { Double(Self.int(try Self.stream(path, "video"), "bit_rate")) / 1000 }
        func tessera(_ args: [String]) throws -> Double {
            let output = try transcoded(source, args + ["--segment-seconds", "4"])
            defer { try? FileManager.default.removeItem(atPath: output) }
            return try kbps(output)
        }
        func ffmpeg(_ args: [String]) throws -> Double {
            let output = Fixtures.output("ffmpeg-rc.mp4")
            defer { try? FileManager.default.removeItem(atPath: output) }
            try Tool.ffmpeg(["-i", source, "-an", "-c:v", "libx264", "-preset", "veryfast"] + args + [output])
            return try kbps(output)
        }
        let average = try tessera(["--bitrate", "300k", "--passes", "1"])
        let whole = try ffmpeg(["-b:v", "300k"])
        #expect(abs(average - 300) / 300 < 0.2, "--bitrate 300k --passes 1 gave \(average) kb/s (ffmpeg \(whole))")
        let twoPass = try tessera(["--bitrate", "300k"])
        #expect(abs(twoPass - 300) / 300 < 0.02, "--bitrate 300k (two passes) gave \(twoPass) kb/s")
        let constant = try tessera(["--bitrate", "300k", "--maxrate", "300k", "--bufsize", "600k"])
        #expect(abs(constant - 300) / 300 < 0.12, "CBR 300k gave \(constant) kb/s")
        let free = try tessera(["--crf", "12"])
        let capped = try tessera(["--crf", "12", "--maxrate", "250k", "--bufsize", "500k"])
        let reference = try ffmpeg(["-crf", "12", "-maxrate", "250k", "-bufsize", "500k"])
        #expect(capped < free * 0.6 && capped <= 250 * 1.05, "capped CRF \(capped) kb/s (uncapped \(free), ffmpeg \(reference))")
    }

    @Test func keyframesProfileAndLevel() throws {
        let output = try transcoded(try Self.plain(), ["--profile", "main", "--level", "3.1", "--bframes", "0",
                                                       "--keyint", "20", "--keyint-seconds", "0.4"])
        defer { try? FileManager.default.removeItem(atPath: output) }
        let video = try Self.stream(output, "video")
        #expect(video["profile"] as? String == "Main")
        #expect(Self.int(video, "level") == 31)
        #expect(Self.int(video, "has_b_frames") == 0)
        let keys = try Self.keyframePositions(output)
        let gaps = zip(keys.dropFirst(), keys).map { $0 - $1 } + [100 - (keys.last ?? 0)]
        #expect(keys.first == 0 && (gaps.max() ?? 99) <= 10, "0.4 s at 25 fps is 10 frames, shorter than --keyint 20: \(keys)")

        let high = try transcoded(try Self.plain(), ["--bframes", "2", "--keyint", "15"])
        defer { try? FileManager.default.removeItem(atPath: high) }
        let highKeys = try Self.keyframePositions(high)
        #expect(zip(highKeys.dropFirst(), highKeys).allSatisfy { $0 - $1 <= 15 })
        #expect(try Self.stream(high, "video")["profile"] as? String == "High")
    }

    @Test func cameraMastersBecomeEightOrTenBit() throws {
        let master = try SourceKind.prores.make()   // ProRes 4:2:2 10-bit, 100 frames
        let eight = try transcoded(master, [])
        defer { try? FileManager.default.removeItem(atPath: eight) }
        var video = try Self.stream(eight, "video")
        #expect(video["pix_fmt"] as? String == "yuv420p" && video["profile"] as? String == "High")
        #expect(Self.int(video, "nb_read_frames") == 100)

        let ten = try transcoded(master, ["--profile", "high10"])
        defer { try? FileManager.default.removeItem(atPath: ten) }
        video = try Self.stream(ten, "video")
        #expect(video["pix_fmt"] as? String == "yuv420p10le" && video["profile"] as? String == "High 10")
        #expect(Self.int(video, "nb_read_frames") == 100)
        #expect(try Self.psnr(ten, master, filter: "format=yuv420p10le") >= 35)
    }

    /// `--codec` through the cluster: the workers encode HEVC tagged `hvc1`, or AV1, every frame once.
    @Test(arguments: [(["--codec", "hevc", "--preset", "ultrafast"], "hevc", "hvc1"), (["--codec", "av1", "--preset", "13"], "av1", "av01")])
    func codecReachesTheWorkers(args: [String], codec: String, tag: String) throws {
        let output = try transcoded(try Self.plain(), args)
        defer { try? FileManager.default.removeItem(atPath: output) }
        let video = try Self.stream(output, "video")
        #expect(video["codec_name"] as? String == codec && video["codec_tag_string"] as? String == tag)
        #expect(Self.int(video, "nb_read_frames") == 100)
    }

    // MARK: colour

    @Test func colourIsCarriedOrConverted() throws {
        let tagged = try Fixtures.media("opt-bt709.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "2",
                                                          "-vf", "scale=out_color_matrix=bt709", "-colorspace", "bt709",
                                                          "-color_primaries", "bt709", "-color_trc", "bt709",
                                                          "-c:v", "libx264", "-preset", "ultrafast", "-g", "25"])
        let carried = try transcoded(tagged, [])
        defer { try? FileManager.default.removeItem(atPath: carried) }
        var video = try Self.stream(carried, "video")
        #expect(video["color_space"] as? String == "bt709" && video["color_primaries"] as? String == "bt709"
                && video["color_transfer"] as? String == "bt709")
        #expect(try Data(contentsOf: URL(fileURLWithPath: carried)).range(of: Data("colr".utf8)) != nil, "colr box written")

        let converted = try transcoded(tagged, ["--color", "bt601"])
        defer { try? FileManager.default.removeItem(atPath: converted) }
        video = try Self.stream(converted, "video")
        #expect(video["color_space"] as? String == "smpte170m" && video["color_primaries"] as? String == "smpte170m")
        let matching = try Self.psnr(converted, tagged, filter: "scale=in_color_matrix=bt709:out_color_matrix=bt601")
        let unconverted = try Self.psnr(converted, tagged)
        #expect(matching >= 35 && matching > unconverted + 3, "samples converted: \(matching) dB vs \(unconverted) dB unconverted")
    }

    // MARK: audio

    @Test func audioRateChannelsAndDownmix() throws {
        // 5.1 with the tone in the centre channel only.
        let surround = try Fixtures.media("opt-51.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-f", "lavfi",
                                                         "-i", "sine=frequency=440:sample_rate=48000", "-t", "2",
                                                         "-filter_complex", "[1:a]pan=5.1|FC=c0[a]", "-map", "0:v", "-map", "[a]",
                                                         "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"])
        let output = try transcoded(surround, ["--audio-rate", "22050", "--audio-channels", "2", "--audio-bitrate", "64k"])
        defer { try? FileManager.default.removeItem(atPath: output) }
        let audio = try Self.stream(output, "audio")
        #expect(audio["codec_name"] as? String == "aac")
        #expect(Self.int(audio, "sample_rate") == 22050 && Self.int(audio, "channels") == 2)
        // The centre reaches both sides equally (a matrix downmix, not the first two channels).
        let stats = try Tool.run("ffmpeg", ["-nostdin", "-hide_banner", "-i", output, "-af", "astats=measure_overall=none", "-f", "null", "-"]).stderr
        let levels = stats.split(whereSeparator: \.isNewline).filter { $0.contains("RMS level dB:") }
            .compactMap { Double($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) }
        #expect(levels.count == 2 && levels.allSatisfy { $0 > -30 } && abs(levels[0] - levels[1]) < 1, "per-channel RMS: \(levels)")

        let tracks = try Fixtures.media("opt-tracks.mp4", Fixtures.lavfi + ["-f", "lavfi", "-i", "sine=frequency=880:sample_rate=44100",
                                                                            "-t", "2", "-map", "0:v", "-map", "1:a", "-map", "2:a",
                                                                            "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac",
                                                                            "-ac:a:1", "1"])
        let second = try transcoded(tracks, ["--audio-track", "1"])
        defer { try? FileManager.default.removeItem(atPath: second) }
        let picked = try Self.stream(second, "audio")
        #expect(Self.int(picked, "sample_rate") == 44100 && Self.int(picked, "channels") == 1)

        let silent = try transcoded(try Self.plain(), ["--audio", "none"])
        defer { try? FileManager.default.removeItem(atPath: silent) }
        #expect(try OutputFacts.read(silent).codecs == ["h264"])
    }

    // MARK: recipes and settings files

    @Test func recipesAndSettingsFiles() throws {
        let list = try Tool.run(binary, ["presets"])
        #expect(list.status == 0)
        for name in ["mobile", "web-720p", "web-1080p", "archive"] { #expect(list.text.contains(name)) }

        let mobile = try transcoded(try Self.plain(), ["--recipe", "mobile", "--audio-channels", "1"])
        defer { try? FileManager.default.removeItem(atPath: mobile) }
        let video = try Self.stream(mobile, "video"), audio = try Self.stream(mobile, "audio")
        #expect(video["profile"] as? String == "High" && Self.int(video, "level") == 41)
        // 750 kb/s asked of 1 s segments of a 4 s clip: per-segment ABR runs low on such short segments.
        #expect((450_000...800_000).contains(Self.int(video, "bit_rate")), "750 kb/s: \(video["bit_rate"] ?? "")")
        #expect(Self.int(audio, "sample_rate") == 22050)
        #expect(Self.int(audio, "channels") == 1, "an explicit option overrides the recipe")

        let yaml = Fixtures.output("settings.yaml"), json = Fixtures.output("settings.json")
        try "# team defaults\nrecipe: web-720p\nmax-size: 160x160\naudio-rate: 44100\nmirror: horizontal\n".write(toFile: yaml, atomically: true, encoding: .utf8)
        try #"{"size": "128x96", "bframes": 0, "fps": 10}"#.write(toFile: json, atomically: true, encoding: .utf8)
        defer { for f in [yaml, json] { try? FileManager.default.removeItem(atPath: f) } }

        let fromYAML = try transcoded(try Self.plain(), ["--settings", yaml])
        defer { try? FileManager.default.removeItem(atPath: fromYAML) }
        let y = try Self.stream(fromYAML, "video")
        #expect(Self.int(y, "width") == 160 && Self.int(y, "height") == 120)
        #expect(Self.int(try Self.stream(fromYAML, "audio"), "sample_rate") == 44100)
        #expect(try Self.psnr(fromYAML, try Self.plain(), filter: "scale=160:120,hflip") >= 33)

        let fromJSON = try transcoded(try Self.plain(), ["--settings", json, "--size", "96x64"])
        defer { try? FileManager.default.removeItem(atPath: fromJSON) }
        let j = try Self.stream(fromJSON, "video")
        #expect(Self.int(j, "width") == 96 && Self.int(j, "height") == 64, "the command line beats the file")
        #expect(Self.int(j, "nb_read_frames") == 40 && Self.int(j, "has_b_frames") == 0)
    }

    // MARK: impossible requests

    /// Requests impossible for this input (OptionValidationTests has those impossible for any input).
    @Test(arguments: [
        (["--level", "1"], "level"),
        (["--audio", "copy", "PRORES"], "--audio copy"),
        (["--audio-track", "3"], "audio stream"),
        (["--level", "3.1", "--bitrate", "20M"], "bitrate"),
    ])
    func impossibleRequestsFailBeforeAnyWork(args: [String], problem: String) throws {
        let source = args.contains("PRORES") ? try SourceKind.prores.make() : try Self.plain()
        let arguments = args.filter { $0 != "PRORES" }
        let untouched = Fixtures.directory.appendingPathComponent("never-\(UUID().uuidString.prefix(6))").path
        let (result, output) = try transcode(source, arguments, dataDir: untouched)
        #expect(result.status != 0, "\(args) should fail")
        let lines = result.stderr.split(whereSeparator: \.isNewline)
        #expect(lines.count == 1, "\(args): one line, got \(result.stderr)")
        #expect(result.stderr.contains(problem), "\(args): \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(!FileManager.default.fileExists(atPath: untouched), "no job store was started")
    }
}
