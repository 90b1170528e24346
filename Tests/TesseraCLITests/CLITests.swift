import Foundation
import Testing
import TesseraTestSupport

/// The `tessera` binary as users run it.
@Suite(.serialized) struct CLITests {
    let binary = Tool.tesseraBinary

    /// Bad input: one line naming the file and the problem, non-zero exit, nothing at the output path.
    @Test(arguments: ["empty", "random", "text", "truncated", "cut-short", "cut-short-mkv", "joined", "audio-only", "missing", "directory"])
    func badInputIsAOneLineError(_ kind: String) throws {
        let dir = Fixtures.directory.appendingPathComponent("bad-\(kind)-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var input = dir.appendingPathComponent("input.mp4").path
        switch kind {
        case "empty":
            _ = FileManager.default.createFile(atPath: input, contents: Data())
        case "random":
            var generator = SystemRandomNumberGenerator()
            _ = FileManager.default.createFile(atPath: input, contents: Data((0..<65536).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        case "text":
            input = dir.appendingPathComponent("notes.txt").path
            _ = FileManager.default.createFile(atPath: input, contents: Data(String(repeating: "not a video\n", count: 100).utf8))
        case "truncated":
            // ffmpeg writes moov at the end: keep the first half, and there is no moov.
            let whole = try Data(contentsOf: URL(fileURLWithPath: try SourceKind.closedGOPWithBFrames.make()))
            _ = FileManager.default.createFile(atPath: input, contents: whole.prefix(whole.count / 2))
        case "cut-short":
            // A faststart file (index first) whose upload stopped at 60 %: the index lists frames the data lacks.
            let whole = dir.appendingPathComponent("whole.mp4").path
            try Tool.ffmpeg(["-i", try SourceKind.closedGOPWithBFrames.make(), "-c", "copy", "-movflags", "+faststart", whole])
            let data = try Data(contentsOf: URL(fileURLWithPath: whole))
            try FileManager.default.removeItem(atPath: whole)
            _ = FileManager.default.createFile(atPath: input, contents: data.prefix(data.count * 6 / 10))
        case "cut-short-mkv":
            // A Matroska upload that stopped at 60 %: its header still says how long the whole is.
            let whole = dir.appendingPathComponent("whole.mkv").path
            try Tool.ffmpeg(["-i", try SourceKind.closedGOPWithBFrames.make(), "-c", "copy", whole])
            let data = try Data(contentsOf: URL(fileURLWithPath: whole))
            try FileManager.default.removeItem(atPath: whole)
            input = dir.appendingPathComponent("upload.mkv").path
            _ = FileManager.default.createFile(atPath: input, contents: data.prefix(data.count * 6 / 10))
        case "joined":
            // Two recordings joined with cat: the second one's clock starts again.
            let part = dir.appendingPathComponent("part.ts").path
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:d=3", "-c:v", "libx264", "-preset", "ultrafast", part])
            let bytes = try Data(contentsOf: URL(fileURLWithPath: part))
            try FileManager.default.removeItem(atPath: part)
            input = dir.appendingPathComponent("joined.ts").path
            _ = FileManager.default.createFile(atPath: input, contents: bytes + bytes)
        case "audio-only":
            input = dir.appendingPathComponent("tone.m4a").path
            try Tool.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "2", "-c:a", "aac", input])
        case "directory":
            input = dir.path
        default:
            input = dir.appendingPathComponent("does-not-exist.mp4").path
        }
        let output = dir.appendingPathComponent("out.mp4").path
        let result = try Tool.run(binary, ["transcode", input, "-o", output, "--preset", "ultrafast"])
        #expect(result.status != 0)
        let lines = result.stderr.split(whereSeparator: \.isNewline)
        #expect(lines.count == 1, "stderr: \(result.stderr)")
        #expect(lines.first?.contains(input) == true, "names the file: \(result.stderr)")
        let problem = ["empty": "empty", "random": "not a media file", "text": "not a media file", "truncated": "moov",
                       "cut-short": "cut short", "cut-short-mkv": "cut short", "joined": "timestamps go back", "audio-only": "no video stream", "missing": "no such file", "directory": "directory"][kind]!
        #expect(result.stderr.contains(problem), "says what is wrong: \(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"))
        #expect(!FileManager.default.fileExists(atPath: output))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains("tessera-tmp") }
        #expect(leftovers.isEmpty)
        // The worker processes forked for the run, never handed their work, leave with it.
        #expect(Self.processesLeft(mentioning: dir.path).isEmpty, "no forked worker left waiting")
    }

    /// A run refused before it starts anything: the worker processes forked for it leave on their own.
    @Test func aRefusedTranscodeLeavesNoWorkerWaiting() throws {
        let source = try SourceKind.closedGOPWithBFrames.make()
        let dir = Fixtures.directory.appendingPathComponent("refused-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let output = dir.appendingPathComponent("out.mp4").path
        _ = FileManager.default.createFile(atPath: output, contents: Data("mine".utf8))
        let result = try Tool.run(binary, ["transcode", source, "-o", output, "--workers", "2"])
        #expect(result.status == 1 && result.stderr.contains("already exists"), "stderr: \(result.stderr)")
        #expect(Self.processesLeft(mentioning: dir.path).isEmpty, "no forked worker left waiting")
    }

    /// Processes whose command line mentions `text`, once those that are leaving have had 5 s to go.
    static func processesLeft(mentioning text: String) -> [String] {
        func find() -> [String] {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.filter { $0.allSatisfy(\.isNumber) }.filter { pid in
                guard let line = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
                return String(decoding: line, as: UTF8.self).contains(text)
            }
        }
        let deadline = Date().addingTimeInterval(5)
        while !find().isEmpty, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        return find()
    }

    /// Through the job store, a private coordinator and two worker processes, as users run it.
    @Test func transcodeExitsZeroWithAVerifiedFile() throws {
        let source = try SourceKind.closedGOPWithBFrames.make()
        let output = Fixtures.output("cli.mp4")
        let dataDir = Fixtures.directory.appendingPathComponent("cli-db-\(UUID().uuidString.prefix(6))").path
        defer {
            try? FileManager.default.removeItem(atPath: output)
            _ = try? Tool.run(binary, ["db", "stop", "--force", "--data-dir", dataDir])
            try? FileManager.default.removeItem(atPath: dataDir)
        }
        let result = try Tool.run(binary, ["transcode", source, "-o", output, "--preset", "ultrafast", "--segment-seconds", "2",
                                           "--workers", "2", "--json", "--data-dir", dataDir])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let json = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        #expect(json?["frames"] as? Int == 150)
        // Both workers were forked before the command started a thread (no second program load each).
        #expect((json?["setup"] as? [String: Any])?["forkedWorkers"] as? Int == 2)
        #expect(result.stderr.contains("tessera: encoding"), "plain progress lines when stderr is not a terminal")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: URL(fileURLWithPath: output).deletingLastPathComponent().path)
            .filter { $0.contains(".tessera-") && $0.contains(URL(fileURLWithPath: output).lastPathComponent) }
        #expect(leftovers.isEmpty, "no scratch left beside the output: \(leftovers)")
        #expect(try OutputFacts.read(output).countedFrames == 150)
    }

    @Test func probeJSONDescribesThePlan() throws {
        let source = try SourceKind.openGOP.make()
        let result = try Tool.run(binary, ["probe", source, "--json", "--segment-seconds", "2", "--workers", "1"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        #expect(json["structure"] as? String == "open-gop")
        #expect(json["frames"] as? Int == 150)
        let segments = try #require(json["segments"] as? [[String: Any]])
        #expect(segments.count == 3)
        #expect(segments.reduce(0) { $0 + ($1["frames"] as? Int ?? 0) } == 150)
    }

    /// A program stream's pictures without a pts are counted and timed by the probe, and said to be.
    @Test func probeSaysWhichPicturesItTimedByDecoding() throws {
        let source = try SourceKind.mpegProgramStream.make()
        let result = try Tool.run(binary, ["probe", source, "--json", "--segment-seconds", "2", "--workers", "1"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        #expect(json["frames"] as? Int == 150)
        let timed = try #require(json["timedByDecoding"] as? Int)
        #expect(timed >= 1, "\(timed)")
        let text = try Tool.run(binary, ["probe", source])
        #expect(text.text.contains("150 frames") && text.text.contains("\(timed) without a pts timed by decoding"), "\(text.text)")
    }

    /// A bad ladder, a rung beyond the level asked (known once the source is probed) or a streaming output
    /// without a ladder: one line, a non-zero exit, nothing at the output path nor beside it.
    @Test(arguments: [(["--ladder", "0"], "rung 0"), (["--ladder", "720,abc"], "'abc'"), (["--ladder", "240,120", "--level", "1"], "--level 1"),
                      (["--ladder", "240", "--hls-time", "0"], "--hls-time"), (["MASTER"], "needs --ladder"), (["--ladder", "240", "--also-dash"], "--also-dash"),
                      (["--ladder", "240", "--thumbnail", "poster.jpg"], "--thumbnail")])
    func aBadLadderLeavesNothing(_ args: [String], _ problem: String) throws {
        let source = try SourceKind.closedGOPWithBFrames.make()
        let dir = Fixtures.directory.appendingPathComponent("bad-ladder-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let output = dir.appendingPathComponent(args == ["MASTER"] ? "hls/master.m3u8" : "out.mp4").path
        let result = try Tool.run(binary, ["transcode", source, "-o", output, "--preset", "ultrafast"] + args.filter { $0 != "MASTER" })
        #expect(result.status != 0, "\(args) should fail")
        let lines = result.stderr.split(whereSeparator: \.isNewline).filter { !$0.contains("job store") }
        #expect(lines.count == 1 && lines[0].contains(problem), "\(args): \(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty, "nothing written for \(args)")
    }

    /// Rungs above the source are dropped, said in one line once the job is planned.
    @Test func droppedRungsAreSaidInOneLine() throws {
        let source = try SourceKind.closedGOPWithBFrames.make()
        let dir = Fixtures.directory.appendingPathComponent("ladder-notice-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try Tool.run(binary, ["transcode", source, "-o", dir.appendingPathComponent("out.mp4").path, "--preset", "ultrafast",
                                           "--ladder", "1080,720,240", "--workers", "1"])
        let notices = result.stderr.split(whereSeparator: \.isNewline).filter { $0.contains("--ladder") }
        #expect(notices == ["tessera: --ladder: dropped 1080 and 720: above the source's 240 rows"], "\(result.stderr)")
    }

    /// The output that is the input, or a directory, is named as such before anything else (even an existing output).
    @Test func theOutputIsNamedForWhatItIsFirst() throws {
        let dir = Fixtures.directory.appendingPathComponent("naming-\(UUID().uuidString.prefix(6))").path
        try FileManager.default.createDirectory(atPath: dir + "/sub", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = dir + "/in.mp4"
        try FileManager.default.copyItem(atPath: try SourceKind.closedGOPWithBFrames.make(), toPath: input)
        for command in ["transcode", "submit"] {
            let same = try Tool.run(binary, [command, input, "-o", input, "--data-dir", dir + "/db"])
            #expect(same.status == 1 && same.stderr == "tessera: \(input): is the input file\n", "\(same.stderr)")
            let folder = try Tool.run(binary, [command, input, "-o", dir + "/sub", "--data-dir", dir + "/db"])
            #expect(folder.status == 1 && folder.stderr == "tessera: \(dir)/sub: is a directory: name the output file in it (\(dir)/sub/out.mp4)\n",
                    "\(folder.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir + "/db"), "refused before the job store is touched")
    }

    /// `keygen` makes the folder it writes into (`/etc/tessera` on a fresh host), readable by its owner only.
    @Test func keygenMakesItsFolder() throws {
        let dir = Fixtures.directory.appendingPathComponent("keygen-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let result = try Tool.run(binary, ["keygen", dir + "/etc/tessera/coordinator"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir + "/etc/tessera/coordinator.key"))
        #expect(FileManager.default.fileExists(atPath: dir + "/etc/tessera/coordinator.pub"))
        let mode = try FileManager.default.attributesOfItem(atPath: dir + "/etc/tessera")[.posixPermissions] as? Int
        #expect(mode == 0o700)
    }

    @Test func impossibleSettingsFailBeforeWork() throws {
        let source = try SourceKind.closedGOPWithBFrames.make()
        let output = Fixtures.output("bad-settings.mp4")
        // --crf 70 is refused by `validate()` (OptionValidationTests has the rest of those); the others by the input.
        for args in [["--level", "1"], ["--crf", "70"], ["--audio", "copy"]] {
            let input = args == ["--audio", "copy"] ? try SourceKind.prores.make() : source
            let result = try Tool.run(binary, ["transcode", input, "-o", output] + args)
            #expect(result.status != 0, "\(args) should fail")
            #expect(result.stderr.split(whereSeparator: \.isNewline).count <= 2, "\(args): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }
}
