import ArgumentParser
import Foundation
import Testing
import TesseraCore
import TesseraEngine
import TesseraTestSupport
@testable import tessera

/// The options `transcode` and `submit` check in `validate()`, parsed as the binary parses them: refused
/// before any file is read or any process started (the input named here does not exist), as one line
/// naming the option and exit status 1.
@Suite struct OptionValidationTests {
    /// `tessera ARGS` as the parser takes it: the line the user would see and the exit status; nil when accepted.
    static func refusal(_ arguments: [String]) -> (line: String, status: Int32)? {
        do {
            _ = try Tessera.parseAsRoot(arguments)
            return nil
        } catch {
            return (Tessera.message(for: error), Tessera.exitCode(for: error).rawValue)
        }
    }

    /// A settings file in the fixtures directory with `text`; its path.
    static func settingsFile(_ name: String, _ text: String) throws -> String {
        let path = Fixtures.output(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(arguments: [
        (["--size", "0x0"], "--size"),
        (["--size", "321x240"], "even"),
        (["--recipe", "potato"], "potato"),
        (["--audio-rate", "12345"], "--audio-rate"),
        (["--fps", "fast"], "--fps"),
        (["--rotate", "45"], "--rotate"),
        (["--preset", "warp"], "warp"),
        (["--crf", "70"], "--crf"),
        (["--crf", "20", "--bitrate", "2M"], "not both"),
        (["--maxrate", "3M"], "--bufsize"),
        (["--passes", "2"], "--bitrate"),
        (["--settings", "MISSING"], "no such file"),
        (["--settings", "BADKEY"], "crff"),
    ])
    func impossibleRequestsAreRefusedAtParseTime(args: [String], problem: String) throws {
        let badKey = try Self.settingsFile("bad.yaml", "crff: 20\n")
        defer { try? FileManager.default.removeItem(atPath: badKey) }
        let arguments = args.map { ["MISSING": Fixtures.output("none.yaml"), "BADKEY": badKey][$0] ?? $0 }
        for command in ["transcode", "submit"] {
            let refused = try #require(Self.refusal([command, "in.mp4", "-o", "out.mp4"] + arguments), "\(command) \(args) should fail")
            #expect(refused.status == 1, "\(command) \(args)")
            #expect(!refused.line.contains("\n"), "\(command) \(args): one line, got \(refused.line)")
            #expect(refused.line.contains(problem), "\(command) \(args): \(refused.line)")
        }
    }

    /// Ladder options refused in one line before anything starts, as `transcode` and `submit` parse them.
    @Test(arguments: [
        (["-o", "out/master.m3u8"], "HLS/DASH output needs --ladder"),
        (["-o", "out/manifest.mpd", "--crf", "20"], "HLS/DASH output needs --ladder"),
        (["-o", "out.mp4", "--ladder", "0"], "--ladder rung 0"),
        (["-o", "out.mp4", "--ladder", "720,abc"], "'abc'"),
        (["-o", "out/master.m3u8", "--ladder", "720", "--hls-time", "0"], "--hls-time must be a positive"),
        (["-o", "out.mp4", "--hls-time", "4"], "--hls-time needs --ladder"),
        (["-o", "out.mp4", "--ladder", "720", "--also-dash"], "--also-dash needs an .m3u8 output"),
        (["-o", "out/master.m3u8", "--ladder", "720", "--also-hls"], "--also-hls needs an .mpd output"),
        (["-o", "out.mp4", "--audio-per-rung"], "--audio-per-rung needs --ladder"),
        (["-o", "out.mp4", "--ladder", "720", "--maxrate", "3M", "--bufsize", "6M"], "--ladder caps each rung"),
        (["-o", "out.mp4", "--two-pass"], "--two-pass needs --ladder"),
        (["-o", "out.mp4", "--bitrate", "3M", "--two-pass"], "--two-pass needs --ladder"),
        (["-o", "out.mp4", "--ladder", "720", "--bitrate", "3M"], "--two-pass"),
    ])
    func ladderMistakesAreRefusedAtParseTime(_ args: [String], _ problem: String) throws {
        for command in ["transcode", "submit"] {
            let refused = try #require(Self.refusal([command, "in.mp4"] + args), "\(command) \(args) should fail")
            #expect(refused.status == 1, "\(command) \(args)")
            #expect(!refused.line.contains("\n") && refused.line.contains(problem), "\(command) \(args): \(refused.line)")
        }
        #expect(Self.refusal(["transcode", "in.mp4", "-o", "out/master.m3u8", "--ladder", "720,360", "--hls-time", "4", "--also-dash"]) == nil)
        #expect(Self.refusal(["submit", "in.mp4", "-o", "out/manifest.mpd", "--ladder", "720", "--also-hls", "--audio-per-rung"]) == nil)
        #expect(Self.refusal(["submit", "in.mp4", "-o", "out/master.m3u8", "--ladder", "720:3M,360", "--two-pass"]) == nil)
    }

    /// `validate()` throws the error itself, with its code: `.settings` for a value, `.input` for the file.
    @Test func validateThrowsTheCodedError() throws {
        var options = try EncodeOptions.parse([])
        options.crf = 99
        let range = #expect(throws: TesseraError.self) { try options.validate() }
        #expect(range?.kind == .settings)
        options.crf = nil
        options.settings = try Self.settingsFile("misspelled.yaml", "crf: 20\nmax-sise: 1280x720\n")
        defer { try? FileManager.default.removeItem(atPath: options.settings!) }
        let file = #expect(throws: TesseraError.self) { try options.validate() }
        #expect(file?.kind == .input)
        #expect(file?.description.contains("max-sise") == true, "names the key: \(file?.description ?? "")")
    }

    /// `--thumbnail-at` needs `--thumbnail` and a time, whatever the paths.
    @Test(arguments: [(["--thumbnail-at", "3"], "--thumbnail"), (["--thumbnail", "t.png", "--thumbnail-at", "soon"], "soon"),
                      (["--thumbnail", "t.jpg", "--thumbnail-at", "1:75"], "1:75")])
    func thumbnailTimeIsRefusedAtParseTime(_ args: [String], _ named: String) throws {
        let refused = try #require(Self.refusal(["transcode", "in.mp4", "-o", "out.mp4"] + args), "\(args) should fail")
        #expect(refused.status == 1)
        #expect(!refused.line.contains("\n") && refused.line.contains(named), "\(args): \(refused.line)")
        #expect(Self.refusal(["transcode", "in.mp4", "-o", "out.mp4", "--thumbnail", "t.jpg", "--thumbnail-at", "00:00:01.5"]) == nil)
    }

    /// The layers resolve without a transcode: defaults < recipe < settings file < command line.
    @Test func settingsLayerUnderTheCommandLine() throws {
        let yaml = try Self.settingsFile("layers.yaml", "# team defaults\nrecipe: web-720p\nmax-size: 160x160\naudio-rate: 44100\ncrf: 30\n")
        defer { try? FileManager.default.removeItem(atPath: yaml) }
        #expect(Self.refusal(["transcode", "in.mp4", "-o", "out.mp4", "--settings", yaml, "--crf", "18"]) == nil)
        let spec = try EncodeOptions.parse(["--settings", yaml, "--crf", "18"]).spec(output: "out.mp4")
        #expect(spec.settings.crf == 18, "the command line beats the file")
        #expect(spec.picture.maxSize == FrameSize(width: 160, height: 160), "the file beats the recipe")
        #expect(spec.audio.sampleRate == 44100)
    }

    /// The planning options' own checks are usage mistakes: exit status 64, with the usage.
    @Test(arguments: [["--segment-seconds", "0"], ["--workers", "0"]])
    func planningMistakesAreUsageErrors(_ args: [String]) throws {
        let refused = try #require(Self.refusal(["transcode", "in.mp4", "-o", "out.mp4"] + args), "\(args) should fail")
        #expect(refused.status == ExitCode.validationFailure.rawValue)
        #expect(refused.line.contains(args[0]), "\(args): \(refused.line)")
    }

    @Test func theCoordinatorTakesMaxWaitAsADuration() throws {
        #expect(Self.refusal(["coordinator", "--insecure", "--max-wait", "1:30:00"]) == nil)
        #expect(Self.refusal(["coordinator", "--insecure", "--max-wait", "90s"]) == nil)
        let refused = try #require(Self.refusal(["coordinator", "--insecure", "--max-wait", "soon"]))
        #expect(refused.status == ExitCode.validationFailure.rawValue)
        #expect(refused.line.contains("--max-wait"), "\(refused.line)")
    }
}
