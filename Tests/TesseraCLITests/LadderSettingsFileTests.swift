import Foundation
import Testing
import TesseraCore
import TesseraTestSupport
@testable import tessera

/// `ladder` in a YAML settings file and in the `streaming` recipe, as `transcode` and `submit` check them.
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

    @Test func streamingRecipeRefusesTheOptionsItsLadderReplaces() {
        let refused = OptionValidationTests.refusal(["transcode", "in.mp4", "-o", "out.mp4", "--recipe", "streaming", "--max-size", "640x360"])
        #expect(refused?.line.contains("--max-size") == true, "\(refused?.line ?? "accepted")")
        #expect(OptionValidationTests.refusal(["transcode", "in.mp4", "-o", "out.mp4", "--recipe", "streaming", "--crf", "20"]) == nil)
    }
}
