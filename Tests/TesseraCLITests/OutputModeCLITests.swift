import Foundation
import Testing
import TesseraTestSupport

/// `--output-mode` through the real binary: a transcode's output has the bits asked for, whatever the umask.
@Suite struct OutputModeCLITests {
    static func mode(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_mode & 0o7777) : -1
    }

    @Test func aTranscodesOutputHasTheModeAskedFor() throws {
        let box = try Sandbox("output-mode")
        defer { box.close() }
        let output = box.path("out.mp4")
        let result = try box.tessera(["transcode", try box.clip(), "-o", output, "--preset", "ultrafast", "--workers", "2",
                                      "--output-mode", "0604", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.mode(output) == 0o604, "not a mode any umask gives")
        let summary = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        try DocumentedKeys("### `transcode --json`").check(summary, "transcode --json")

        let refused = try box.tessera(["transcode", try box.clip("b.mp4"), "-o", box.path("b-out.mp4"), "--output-mode", "u+rw"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--output-mode u+rw is not a mode"), "\(refused.stderr)")
    }
}
