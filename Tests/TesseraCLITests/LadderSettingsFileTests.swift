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

    /// A good ladder is checked, then refused in one line: no job carries one yet, and none is ignored.
    @Test func aGoodLadderIsRefusedNotIgnored() throws {
        let path = try OptionValidationTests.settingsFile("ladder-good.yaml", "ladder: 1080,720:3M,480\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        for command in ["transcode", "submit"] {
            let refused = try #require(OptionValidationTests.refusal([command, "in.mp4", "-o", "out.mp4", "--settings", path]))
            #expect(refused.status == 1 && refused.line.contains("--ladder") && refused.line.contains("not made yet"), "\(refused.line)")
        }
    }
}
