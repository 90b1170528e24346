import Foundation
import Testing
import TesseraTestSupport

/// What ffmpeg users type, through the real binary: one-line hints, `-y` and `-n`, URL and `-` paths,
/// and a first run that times the transcode apart from the sample clip and the job store's start.
@Suite(.serialized) struct HabitsCLITests {
    let binary = Tool.tesseraBinary

    /// Exactly one line on stderr, nothing on stdout, exit status 64 (a usage mistake, as the parser's own).
    @Test(arguments: [
        (["transcode", "-i", "in.mp4", "-o", "out.mp4"], "-i is ffmpeg's option: give the input first, without -i: tessera transcode in.mp4 -o OUTPUT"),
        (["transcode", "in.mp4", "-o", "out.mp4", "-c:v", "libx264"], "-c:v is ffmpeg's option: use --codec h264"),
        (["transcode", "in.mp4", "-b:v", "2M", "-o", "out.mp4"], "-b:v is ffmpeg's option: use --bitrate 2M"),
        (["transcode", "in.mp4", "-o", "out.mp4", "-vf", "scale=1280:-2"],
         "-vf is ffmpeg's option: use --size WxH (exact) or --max-size WxH (fits inside, keeping the aspect ratio)"),
        (["submit", "in.mp4", "-o", "out.mp4", "-crf", "20"], "-crf is ffmpeg's option: use --crf 20"),
        (["transcode", "in.mp4", "-o", "out.mp4", "-movflags", "+faststart"], "-movflags is ffmpeg's option: Tessera always writes faststart MP4: leave it out"),
        (["transcode", "in.mp4", "-o", "out/master.m3u8", "--ladder", "720,360", "-hls_time", "4"],
         "-hls_time is ffmpeg's option: use --hls-time 4 with --ladder"),
        (["trancode", "in.mp4", "-o", "out.mp4"], "unknown command 'trancode'; did you mean 'transcode'?"),
        // Once read as bundles of one-letter flags holding -h: the help on stdout, exit 0, no output.
        (["transcode", "in.mp4", "-o", "out.mp4", "-threads", "2"], "-threads is ffmpeg's option: use --threads 2 (libx264 threads per encoder)"),
        (["transcode", "-hide_banner", "in.mp4", "-o", "out.mp4"],
         "-hide_banner is ffmpeg's option: Tessera prints no banner and shows progress only on a terminal: leave it out"),
        (["transcode", "in.mp4", "-o", "out.mp4", "-ss", "10"],
         "-ss is ffmpeg's option: trimming is not supported: cut the input first (ffmpeg -ss START -t DURATION -i IN -c copy CUT.mp4), then transcode the cut"),
        (["transcode", "in.mp4", "-o", "out.mp4", "-tune", "film"], "-tune is ffmpeg's option: Tessera has no --tune: leave it out"),
        (["transcode", "in.mp4", "-o", "out.mp4", "-hwhat"], "-hwhat is not an option: Tessera's are spelled with two dashes (tessera transcode --help)"),
    ])
    func ffmpegWordsGetAOneLineHint(_ arguments: [String], _ message: String) throws {
        let result = try Tool.run(binary, arguments)
        #expect(result.status == 64)
        #expect(result.stderr == "tessera: \(message)\n")
        #expect(result.text.isEmpty)
    }

    /// A URL or `-` is named as what it is, before anything starts (no job store, nothing written).
    @Test(arguments: [
        (["transcode", "http://127.0.0.1:1/x.mp4", "-o", "OUT"], "http://127.0.0.1:1/x.mp4: a URL input is not supported: give a file path"),
        (["transcode", "-", "-o", "OUT"], "-: reading standard input is not supported: give a file path"),
        (["transcode", "IN", "-o", "-"], "-: writing to standard output is not supported: give a file path"),
        (["submit", "https://example.com/in.mov", "-o", "OUT"], "https://example.com/in.mov: a URL input is not supported: give a file path"),
        (["submit", "-", "-o", "OUT"], "-: reading standard input is not supported: give a file path"),
        (["probe", "rtmp://127.0.0.1/live"], "rtmp://127.0.0.1/live: a URL input is not supported: give a file path"),
        (["probe", "-"], "-: reading standard input is not supported: give a file path"),
    ])
    func urlAndStandardInputAreNamed(_ arguments: [String], _ message: String) throws {
        let box = try Sandbox("not-a-file")
        defer { box.close() }
        let input = try box.clip()
        let args = arguments.map { $0 == "IN" ? input : $0 == "OUT" ? box.path("out.mp4") : $0 }
        let result = try Tool.run(binary, args, environment: ["TESSERA_DATA_DIR": box.dataDir])
        #expect(result.status == 1)
        #expect(result.stderr == "tessera: \(message)\n")
        #expect(!FileManager.default.fileExists(atPath: box.dataDir), "the job store was not started")
        #expect(try FileManager.default.contentsOfDirectory(atPath: box.directory.path) == ["in.mp4"])
    }

    /// An existing output stays as it was without -y (one line naming it, before any work); -y replaces
    /// it, also given before the command as ffmpeg users do; -n is the default, spelled out.
    @Test func existingOutputNeedsY() throws {
        let box = try Sandbox("overwrite")
        defer { box.close() }
        let input = try box.clip(), output = box.path("out.mp4")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: output))
        for extra in [[], ["-n"]] {
            let refused = try box.tessera(["transcode", input, "-o", output, "--preset", "ultrafast"] + extra)
            #expect(refused.status == 1)
            #expect(refused.stderr == "tessera: \(output): already exists: give -y to overwrite it\n")
            #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data("keep me".utf8))
            #expect(!FileManager.default.fileExists(atPath: box.dataDir), "refused before the job store started")
        }
        let thumbnail = box.path("poster.jpg")
        try Data("old poster".utf8).write(to: URL(fileURLWithPath: thumbnail))
        try FileManager.default.removeItem(atPath: output)
        let poster = try box.tessera(["transcode", input, "-o", output, "--thumbnail", thumbnail])
        #expect(poster.stderr == "tessera: \(thumbnail): already exists: give -y to overwrite it\n")
        #expect(!FileManager.default.fileExists(atPath: output))
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: output))

        let both = try box.tessera(["transcode", input, "-o", output, "-y", "-n"])
        #expect(both.status == 1 && both.stderr == "tessera: -y and -n contradict each other: give one of them\n")

        let replaced = try box.tessera(["-y", "transcode", input, "-o", output, "--preset", "ultrafast", "--thumbnail", thumbnail])
        #expect(replaced.status == 0, "stderr: \(replaced.stderr)")
        #expect(try OutputFacts.read(output).countedFrames == 50)
        #expect(try Data(contentsOf: URL(fileURLWithPath: thumbnail)) != Data("old poster".utf8))

        let again = try box.tessera(["transcode", input, "-o", output, "--preset", "ultrafast", "--overwrite"])
        #expect(again.status == 0, "stderr: \(again.stderr)")

        let submitted = try box.tessera(["submit", input, "-o", output])
        #expect(submitted.status == 1 && submitted.stderr == "tessera: \(output): already exists: give -y to overwrite it\n")
        #expect(submitted.text.isEmpty, "no job queued")
        let sample = try Tool.run(binary, ["sample", output, "--seconds", "1"])
        #expect(sample.status == 1 && sample.stderr == "tessera: \(output): already exists: give -y to overwrite it\n")
        #expect(try OutputFacts.read(output).countedFrames == 50)
    }

    /// A still picture given as the input becomes a one-frame video, as ffmpeg makes it.
    @Test func aStillPictureBecomesAOneFrameVideo() throws {
        let box = try Sandbox("still")
        defer { box.close() }
        let still = box.path("photo.jpg"), output = box.path("photo.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-frames:v", "1", still])
        let made = try box.tessera(["transcode", still, "-o", output, "--preset", "ultrafast"])
        #expect(made.status == 0, "stderr: \(made.stderr)")
        let facts = try OutputFacts.read(output)
        #expect(facts.countedFrames == 1 && facts.decodeErrors.isEmpty, "\(facts.decodeErrors)")
    }

    /// Without INPUT on a store never used: the sample clip's generation and the store's start are
    /// reported on their own lines and left out of the result line's time; the next run starts neither.
    @Test func firstRunTimesTheTranscodeAlone() throws {
        let box = try Sandbox("first-run")
        defer { box.close() }
        let output = box.path("sample.mp4")
        let first = try box.tessera(["transcode", "-o", output, "--preset", "ultrafast", "--json"])
        #expect(first.status == 0, "stderr: \(first.stderr)")
        let lines = first.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first?.wholeMatch(of: /tessera: no input given: generated a 10 s sample clip in \d+\.\d\d s/) != nil, "\(lines)")
        #expect(lines.filter { $0 == "tessera: creating the job store in \(box.dataDir) (tessera db stop stops its server)" }.count == 1)
        #expect(lines.contains { $0.wholeMatch(of: /tessera: started the job store in \d+\.\d\d s/) != nil }, "\(lines)")
        let json = try #require(try JSONSerialization.jsonObject(with: first.stdout) as? [String: Any])
        let setup = try #require(json["setup"] as? [String: Double])
        #expect(setup["sampleSeconds"]! > 0 && setup["storeStartSeconds"]! > 0)

        let second = try box.tessera(["transcode", "-y", "-o", output, "--preset", "ultrafast"])
        #expect(second.status == 0, "stderr: \(second.stderr)")
        #expect(!second.stderr.contains("job store"), "\(second.stderr)")
        let result = try #require(second.stderr.split(separator: "\n").last.map(String.init))
        #expect(result.wholeMatch(of: /tessera: .*sample\.mp4: 300 frames in \d+ segments, 10\.00 s of video in \d+\.\d\d s \(\d+\.\d\dx\), level .*/) != nil,
                "\(result)")
    }
}
