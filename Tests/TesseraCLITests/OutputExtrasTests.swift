import Foundation
import Testing
import TesseraTestSupport

/// `transcode --thumbnail`, `--delete-source`, `--on-complete` and `--on-error` through the real binary,
/// checked with ffprobe, ffmpeg and the file system.
@Suite(.serialized) struct OutputExtrasTests {
    /// The picture is the output's frame at the asked-for time (10% in by default): same size as the
    /// output, the codec its extension names, and the pixels ffmpeg itself decodes at that time.
    @Test(arguments: [("thumb.jpg", nil, 0.2), ("poster.PNG", "00:00:01.2", 1.2)] as [(String, String?, Double)])
    func thumbnailIsTheOutputsFrameAtTheTime(_ name: String, _ at: String?, _ seconds: Double) throws {
        let box = try Sandbox("thumbnail")
        defer { box.close() }
        let output = box.path("out.mp4"), thumbnail = box.path(name)
        let result = try box.tessera(["transcode", try box.clip(), "-o", output, "--preset", "ultrafast", "--thumbnail", thumbnail]
                                     + (at.map { ["--thumbnail-at", $0] } ?? []))
        #expect(result.status == 0, "stderr: \(result.stderr)")

        let picture = try Tool.ffprobe(["-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", thumbnail])
        let video = try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0", output])
        let codec = name.hasSuffix("jpg") ? "mjpeg" : "png"
        #expect(picture.trimmingCharacters(in: .whitespacesAndNewlines) == "\(codec),\(video.trimmingCharacters(in: .whitespacesAndNewlines))")
        try Tool.ffmpeg(["-i", thumbnail, "-f", "null", "-"])

        // ffmpeg's own decode of the output at that time; neighbouring frames of testsrc2 differ (about 20 dB).
        let reference = box.path("reference.png")
        try Tool.ffmpeg(["-ss", String(seconds), "-i", output, "-frames:v", "1", reference])
        let psnr = try Self.psnr(thumbnail, reference)
        #expect(psnr > (codec == "png" ? 60 : 35), "PSNR \(psnr) dB against ffmpeg's frame at \(seconds) s")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: box.directory.path).filter { $0.contains("tessera-tmp") }
        #expect(leftovers.isEmpty)
    }

    /// A bad thumbnail path or time is one line, before anything starts: no job store, no output.
    @Test(arguments: [(["--thumbnail", "thumb.gif"], "thumb.gif"), (["--thumbnail", "/no/such/dir/t.jpg"], "/no/such/dir"),
                      (["--thumbnail", "in.mp4"], "in.mp4"), (["--thumbnail", "t.jpg", "--thumbnail-at", "1:75"], "1:75"),
                      (["--thumbnail-at", "3"], "--thumbnail"), (["--thumbnail", "t.png", "--thumbnail-at", "soon"], "soon")])
    func badThumbnailOptionsFailBeforeWork(_ options: [String], _ named: String) throws {
        let box = try Sandbox("bad-thumbnail")
        defer { box.close() }
        let input = try box.clip()
        let options = options.map { $0.hasSuffix(".gif") || $0 == "t.jpg" || $0 == "t.png" || $0 == "in.mp4" ? box.path($0) : $0 }
        let output = box.path("out.mp4")
        let result = try box.tessera(["transcode", input, "-o", output] + options)
        #expect(result.status == 1)
        let lines = result.stderr.split(whereSeparator: \.isNewline)
        #expect(lines.count == 1 && lines[0].hasPrefix("tessera: ") && lines[0].contains(named), "stderr: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: box.dataDir), "the job store was not even started")
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(try FileManager.default.contentsOfDirectory(atPath: box.directory.path) == ["in.mp4"])
    }

    @Test func deleteSourceRemovesTheInputOnceTheOutputIsInPlace() throws {
        let box = try Sandbox("delete-source")
        defer { box.close() }
        let input = try box.clip(), output = box.path("out.mp4")
        let result = try box.tessera(["transcode", input, "-o", output, "--preset", "ultrafast", "--delete-source"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: input))
        #expect(try OutputFacts.read(output).countedFrames == 50)
    }

    /// Impossible settings, an unreadable input, the output being the input (through a symbolic or a
    /// hard link) and no input at all (the sample clip): non-zero exit, and the input is still there.
    @Test(arguments: ["settings", "input", "symlink", "hardlink", "sample"])
    func deleteSourceKeepsTheInputWhenAnythingFails(_ kind: String) throws {
        let box = try Sandbox("keep-source")
        defer { box.close() }
        var input: String? = try box.clip()
        var output = box.path("out.mp4")
        var extra: [String] = []
        switch kind {
        case "settings": extra = ["--level", "1"]
        case "input": try Data(String(repeating: "not a video\n", count: 50).utf8).write(to: URL(fileURLWithPath: input!))
        case "symlink":
            output = box.path("link.mp4")
            try FileManager.default.createSymbolicLink(atPath: output, withDestinationPath: input!)
        case "hardlink":
            output = box.path("hard.mp4")
            try FileManager.default.linkItem(atPath: input!, toPath: output)
        default: input = nil
        }
        let before = try input.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        let result = try box.tessera(["transcode"] + (input.map { [$0] } ?? []) + ["-o", output, "--preset", "ultrafast", "--delete-source"] + extra)
        #expect(result.status == 1)
        #expect(result.stderr.split(whereSeparator: \.isNewline).count == 1, "stderr: \(result.stderr)")
        if let input {
            #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == before, "the input is untouched")
            if kind != "settings" { #expect(result.stderr.contains(URL(fileURLWithPath: input).lastPathComponent), "names the file: \(result.stderr)") }
        } else {
            #expect(result.stderr.contains("--delete-source"))
        }
        if kind == "settings" || kind == "input" { #expect(!FileManager.default.fileExists(atPath: output)) }
    }

    /// --on-complete sees the job's result in its environment; its own failure is a warning and its
    /// stdout goes to stderr, so the JSON result stays the only thing on stdout.
    @Test func onCompleteGetsTheResultAndCannotChangeTheExitStatus() throws {
        let box = try Sandbox("on-complete")
        defer { box.close() }
        let input = try box.clip(), output = box.path("out.mp4")
        let done = box.path("done.env"), errored = box.path("error.env")
        let result = try box.tessera(["transcode", input, "-o", output, "--preset", "ultrafast", "--json",
                                      "--on-complete", "echo hook-ran; env > '\(done)'; exit 7", "--on-error", "env > '\(errored)'"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        #expect(result.stderr.contains("hook-ran"))
        #expect(result.stderr.contains("tessera: warning: --on-complete command exited with status 7"), "stderr: \(result.stderr)")

        let env = try Sandbox.environment(in: done)
        #expect(env["TESSERA_STATE"] == "done")
        #expect(env["TESSERA_JOB_ID"] == json["job"] as? String)
        #expect(env["TESSERA_INPUT"] == input)
        #expect(env["TESSERA_OUTPUT"] == output)
        #expect(env["TESSERA_ERROR"] == nil)
        let wall = try #require(env["TESSERA_WALL_SECONDS"].flatMap(Double.init))
        #expect(wall > 0 && wall < 600)
        #expect(!FileManager.default.fileExists(atPath: errored))
    }

    /// --on-error sees the one-line error the user sees; --on-complete does not run.
    @Test func onErrorGetsTheOneLineError() throws {
        let box = try Sandbox("on-error")
        defer { box.close() }
        let input = box.path("notes.mp4"), output = box.path("out.mp4")
        try Data(String(repeating: "not a video\n", count: 50).utf8).write(to: URL(fileURLWithPath: input))
        let done = box.path("done.env"), errored = box.path("error.env")
        let result = try box.tessera(["transcode", input, "-o", output, "--on-complete", "env > '\(done)'",
                                      "--on-error", "env > '\(errored)'; exit 3"])
        #expect(result.status == 1)
        let lines = result.stderr.split(whereSeparator: \.isNewline).map(String.init)
        #expect(lines.count == 2 && lines[1] == "tessera: warning: --on-error command exited with status 3", "stderr: \(result.stderr)")
        let env = try Sandbox.environment(in: errored)
        #expect(env["TESSERA_STATE"] == "failed")
        #expect(lines.first == "tessera: " + (env["TESSERA_ERROR"] ?? "(none)"))
        #expect(env["TESSERA_ERROR"]?.contains("notes.mp4") == true)
        #expect(env["TESSERA_INPUT"] == input && env["TESSERA_OUTPUT"] == output)
        #expect(env["TESSERA_JOB_ID"] == "", "refused before a job was created")
        #expect(!FileManager.default.fileExists(atPath: done))
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    /// "average:42.8" (or "inf") from ffmpeg's psnr filter, comparing in RGB.
    static func psnr(_ a: String, _ b: String) throws -> Double {
        try Tool.psnr(a, b, lavfi: "[0]format=rgb24[a];[1]format=rgb24[b];[a][b]psnr").average
    }
}
