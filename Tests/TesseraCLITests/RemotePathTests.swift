import Foundation
import Testing
import TesseraStore
import TesseraTestSupport

/// `submit --remote-path`: the paths are the coordinator's, checked by it when it plans, not where `submit` runs.
@Suite struct RemotePathTests {
    @Test func theCoordinatorChecksRemotePathsAndKeepsMinusN() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator()
        try cluster.startWorker("w1")
        let source = try SourceKind.closedGOPWithBFrames.make()
        let existing = cluster.directory.appendingPathComponent("existing.mp4").path
        try Data("mine".utf8).write(to: URL(fileURLWithPath: existing))

        // An input submit cannot see here is queued all the same; the coordinator's probe fails the job.
        let absent = try cluster.submit("/nowhere/in.mov", cluster.directory.appendingPathComponent("a.mp4").path, ["--remote-path", "--json"])
        let absentID = try #require((try JSONSerialization.jsonObject(with: Data(absent.utf8)) as? [String: Any])?["id"] as? String)
        let failed = try cluster.wait(absentID)
        #expect(failed.state == .failed && failed.error?.contains("/nowhere/in.mov") == true, "\(failed.error ?? "")")

        // An existing output: refused by the coordinator without -y, the file left alone; replaced with it.
        let kept = try cluster.wait(try cluster.submit(source, existing, ["--remote-path"]))
        #expect(kept.state == .failed && kept.error?.contains("\(existing): already exists: give -y to overwrite it") == true, "\(kept.error ?? "")")
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "mine")
        let replaced = try cluster.wait(try cluster.submit(source, existing, ["--remote-path", "-y"]))
        #expect(replaced.state == .done, "\(replaced.error ?? "")")
        #expect(try Data(contentsOf: URL(fileURLWithPath: existing)).count > 1000)

        let relative = try Tool.run(cluster.binary, ["submit", "in.mov", "-o", "/media/out.mp4", "--remote-path"] + cluster.db)
        #expect(relative.status == 1)
        #expect(relative.stderr == "tessera: --remote-path: INPUT and -o must be absolute paths, as the coordinator sees them\n")
    }
}
