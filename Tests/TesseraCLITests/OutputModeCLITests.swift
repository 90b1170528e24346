import Foundation
import Testing
import TesseraStore
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

    /// A coordinator's `--output-mode` is the default of the jobs that name none; a job's own wins. A streaming
    /// ladder's folders get the folder mode, its files the mode.
    @Test func theCoordinatorsModeIsTheDefaultAndAJobsOwnWins() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator(["--output-mode", "0604"])
        try cluster.startWorker("w1")
        let source = try SourceKind.closedGOPWithBFrames.make()
        let out = cluster.directory.appendingPathComponent("default.mp4").path
        let own = cluster.directory.appendingPathComponent("own.mp4").path
        let hls = cluster.directory.appendingPathComponent("hls")
        try FileManager.default.createDirectory(at: hls, withIntermediateDirectories: true)
        let jobs = [try cluster.submit(source, out), try cluster.submit(source, own, ["--output-mode", "0640"]),
                    try cluster.submit(source, hls.appendingPathComponent("master.m3u8").path, ["--ladder", "240,120", "--hls-time", "2"])]
        for job in jobs { #expect(try cluster.wait(job, timeout: 240).state == .done, "\(job)") }
        #expect(Self.mode(out) == 0o604 && Self.mode(own) == 0o640)
        #expect(Self.mode(hls.path) == 0o705 && Self.mode(hls.appendingPathComponent("240p").path) == 0o705)
        #expect(Self.mode(hls.appendingPathComponent("master.m3u8").path) == 0o604)
    }

    /// An input this host does not have is named as such, with where to run `submit`.
    @Test func submitSaysTheInputIsNotOnThisHost() throws {
        let box = try Sandbox("not-here")
        defer { box.close() }
        let result = try box.tessera(["submit", "/media/nowhere/in.mov", "-o", box.path("out.mp4")])
        #expect(result.status == 1 && result.text.isEmpty)
        #expect(result.stderr.hasPrefix("tessera: /media/nowhere/in.mov: no such file on this host: submit checks the input and output where it runs"),
                "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
    }
}
