import Foundation
import Testing
import TesseraCore
import TesseraTestSupport
@testable import tessera

/// `ladder` in a YAML settings file, as `transcode` and `submit` check them.
@Suite struct LadderSettingsFileTests {
    @Test func yamlTakesAStringOrAList() throws {
        let expected = try Ladder(parsing: "1080,720:3M,480")
        for text in ["ladder: 1080,720:3M,480\n", "ladder: [1080, \"720:3M\", 480]\n", "ladder:\n  - 1080\n  - 720:3M\n  - 480p\n"] {
            #expect(try YAMLSettings.decode(text).resolvedLadder() == expected, "\(text)")
        }
    }

    @Test(arguments: [("ladder: 720,abc\n", "abc"), ("ladder: [0]\n", "0"), ("ladder: 720,720\n", "twice"),
                      ("ladder: 720\nsize: 640x360\n", "--size")])
    func aBadLadderIsOneLineBeforeAnyWork(yaml: String, named: String) throws {
        let path = try OptionValidationTests.settingsFile("ladder.yaml", yaml)
        defer { try? FileManager.default.removeItem(atPath: path) }
        for command in ["transcode", "submit"] {
            let refused = try #require(OptionValidationTests.refusal([command, "in.mp4", "-o", "out.mp4", "--settings", path]),
                                       "\(command) \(yaml)")
            #expect(refused.status == 1 && !refused.line.contains("\n"), "\(refused.line)")
            #expect(refused.line.contains("--ladder") && refused.line.contains(named), "\(refused.line)")
        }
    }

    /// A good ladder is frozen with the job: `ladder`, `hls-time` and `audio-per-rung` from the file, the
    /// packaging from the output's name, the command line over the file.
    @Test func aSettingsFileLadderIsFrozenWithTheJob() throws {
        let path = try OptionValidationTests.settingsFile("ladder-good.yaml", "ladder: 1080,720:3M,480\nhls-time: 4\naudio-per-rung: true\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let ladder = try Ladder(parsing: "1080,720:3M,480")
        let options = try EncodeOptions.parse(["--settings", path])
        #expect(try options.spec(output: "out/master.m3u8").ladder
            == LadderSpec(ladder: ladder, packaging: .hls, segmentSeconds: 4, audioPerRung: true))
        #expect(try options.spec(output: "out.mp4").ladder?.packaging == .files)
        let over = try EncodeOptions.parse(["--settings", path, "--hls-time", "2", "--ladder", "720,360", "--also-hls"])
        #expect(try over.spec(output: "dash/manifest.mpd").ladder
            == LadderSpec(ladder: try Ladder(parsing: "720,360"), packaging: .hlsAndDash, segmentSeconds: 2, audioPerRung: true))
        for command in ["transcode", "submit"] {
            #expect(OptionValidationTests.refusal([command, "in.mp4", "-o", "out/master.m3u8", "--settings", path]) == nil, "\(command)")
        }
    }

    /// `two-pass` in a file makes the ladder's rates averages; `--crf` on the command line takes capped CRF back.
    @Test func aSettingsFileTwoPassIsFrozenWithTheLadder() throws {
        let path = try OptionValidationTests.settingsFile("ladder-two-pass.yaml", "ladder: 720:3M,360\ntwo-pass: true\n")
        #expect(try EncodeOptions.parse(["--settings", path]).spec(output: "out/master.m3u8").ladder?.twoPass == true)
        #expect(try EncodeOptions.parse(["--settings", path, "--crf", "21"]).spec(output: "out/master.m3u8").ladder?.twoPass == false)
        #expect(try EncodeOptions.parse(["--ladder", "720", "--two-pass"]).spec(output: "out.mp4").ladder?.twoPass == true)
    }

    /// ffmpeg's spelling of a key is refused, naming Tessera's; `hls-time` without a ladder is refused too.
    @Test(arguments: [("hls_time: 4\nladder: 720\n", "use 'hls-time'"), ("hls-time: 4\n", "--hls-time needs --ladder"),
                      ("ladder: 720\nhls-time: 0\n", "--hls-time must be a positive"), ("audio-per-rung: true\n", "--audio-per-rung needs --ladder"),
                      ("two-pass: true\n", "--two-pass needs --ladder")])
    func ladderKeysAreChecked(yaml: String, named: String) throws {
        let path = try OptionValidationTests.settingsFile("ladder-keys.yaml", yaml)
        defer { try? FileManager.default.removeItem(atPath: path) }
        for command in ["transcode", "submit"] {
            let refused = try #require(OptionValidationTests.refusal([command, "in.mp4", "-o", "out.mp4", "--settings", path]), "\(yaml)")
            #expect(refused.status == 1 && !refused.line.contains("\n") && refused.line.contains(named), "\(refused.line)")
        }
    }

    /// `presets` lists the streaming recipe, whose ladder is 1080/720/480/360, and `--recipe streaming` is a ladder job.
    @Test func streamingRecipeIsALadder() throws {
        let listed = try Tool.run(Tool.tesseraBinary, ["presets"])
        #expect(listed.status == 0 && listed.text.contains("streaming") && listed.text.contains("--ladder 1080,720,480,360"), "\(listed.text)")
        let spec = try EncodeOptions.parse(["--recipe", "streaming"]).spec(output: "out/master.m3u8")
        #expect(spec.ladder?.ladder == (try Ladder(parsing: "1080,720,480,360")) && spec.ladder?.packaging == .hls)
        #expect(spec.settings.crf == 23 && spec.settings.maxrate == nil && spec.picture.maxSize == nil)
        let refused = OptionValidationTests.refusal(["transcode", "in.mp4", "-o", "out.mp4", "--recipe", "streaming", "--max-size", "640x360"])
        #expect(refused?.line.contains("--max-size") == true, "\(refused?.line ?? "accepted")")
    }
}
