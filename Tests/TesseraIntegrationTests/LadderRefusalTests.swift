import Foundation
import Testing
import TesseraTestSupport

/// A bad ladder is refused before any work: one line naming the problem, a non-zero exit, nothing at the output.
@Suite(.serialized) struct LadderRefusalTests {
    /// 1 s of 1280x720: a 720 rung that level 3 cannot carry (3600 macroblocks a frame, the level's limit 1620).
    static func tallSource() throws -> String {
        try Fixtures.media("ladder-1280x720.mp4", ["-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25:duration=1",
                                                   "-c:v", "libx264", "-preset", "ultrafast"])
    }

    /// Runs `tessera COMMAND SOURCE -o OUTPUT ARGUMENTS` and checks the refusal: non-zero, one line on stderr containing
    /// each of `naming`, nothing written at the output (a folder's manifest or a file and its rung files).
    func expectRefused(_ command: String = "transcode", source: String, output: String, _ arguments: [String], naming: [String]) throws {
        let sandbox = try Sandbox("ladder-refused")
        defer { sandbox.close() }
        let target = sandbox.path(output)
        let result = try sandbox.tessera([command, source, "-o", target] + arguments + ["--preset", "veryfast"])
        let said = result.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(result.status != 0, "\(command) \(arguments): exit \(result.status), \(said)")
        #expect(!said.isEmpty && !said.contains("\n"), "one line: \(said)")
        for name in naming { #expect(said.contains(name), "names \(name): \(said)") }
        let written = try FileManager.default.contentsOfDirectory(atPath: sandbox.directory.path).filter { $0 != "db" }
        #expect(written.isEmpty, "nothing at \(output): \(written)")
        if command == "submit" {
            let jobs = try sandbox.tessera(["list", "--json"])
            let listed = try JSONSerialization.jsonObject(with: jobs.stdout) as? [Any]
            #expect(listed?.isEmpty == true, "no job queued: \(jobs.text)")
        }
    }

    @Test func aZeroRungIsRefused() throws {
        try expectRefused(source: try LadderTests.source(), output: "out/master.m3u8", ["--ladder", "0"], naming: ["--ladder", "0"])
    }

    @Test func aRungThatIsNotAHeightIsRefused() throws {
        try expectRefused(source: try LadderTests.source(), output: "out/master.m3u8", ["--ladder", "720,abc"], naming: ["--ladder", "abc"])
        try expectRefused(source: try LadderTests.source(), output: "out.mp4", ["--ladder", "360,abc"], naming: ["--ladder", "abc"])
    }

    @Test func submitRefusesABadLadderToo() throws {
        try expectRefused("submit", source: try LadderTests.source(), output: "out/master.m3u8", ["--ladder", "720,abc"], naming: ["abc"])
    }

    /// A rung above the pinned level's frame size, and one whose named peak rate is above the level's.
    @Test func aRungBeyondThePinnedLevelIsRefused() throws {
        try expectRefused(source: try Self.tallSource(), output: "out/master.m3u8", ["--ladder", "720,360", "--level", "3.0"],
                          naming: ["720", "--level 3"])
        try expectRefused(source: try LadderTests.source(), output: "out/master.m3u8", ["--ladder", "360:20M", "--level", "3.0"],
                          naming: ["360", "--level 3"])
    }
}
