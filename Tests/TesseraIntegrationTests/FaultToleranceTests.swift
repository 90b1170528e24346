import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraStore
import TesseraTestSupport

/// Faults the store cannot see, on one host: a full spool disk, an input replaced mid-job, the store
/// gone for a minute. Real coordinator and worker processes, as an operator runs them.
@Suite(.serialized) struct FaultToleranceTests {
    /// 8 s of 640x360 with 1 s GOPs and AAC: enough segments to be mid-job when a fault comes.
    static func source() throws -> String {
        try Fixtures.media("faults-640x360.mp4", ["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=8",
                                                  "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=8",
                                                  "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-keyint_min", "25",
                                                  "-c:a", "aac", "-shortest"])
    }

    static func statusJSON(_ cluster: Cluster, _ job: String) throws -> [String: Any] {
        let status = try Tool.run(cluster.binary, ["status", job, "--json"] + cluster.db)
        guard status.status == 0 else { throw ToolError("status: \(status.stderr)") }
        guard let object = try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any] else { throw ToolError("status: \(status.text)") }
        return object
    }

    /// A spool on a filesystem with no room: the job stops being leased, `status --json` says why within
    /// a few seconds, and once space is freed it resumes and completes frame-exact.
    @Test(.enabled(if: getuid() == 0, "mounting a small filesystem needs root: skipped"))
    func aFullSpoolStallsTheJobUntilSpaceReturns() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        let spool = cluster.directory.appendingPathComponent("small-spool")
        try FileManager.default.createDirectory(at: spool, withIntermediateDirectories: true)
        let mounted = try Tool.run("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", spool.path])
        try #require(mounted.status == 0, "mount: \(mounted.stderr)")
        defer { _ = try? Tool.run("umount", ["-l", spool.path]) }
        // Nothing left: a filler takes every free byte.
        let filler = spool.appendingPathComponent("filler").path
        _ = try Tool.run("dd", ["if=/dev/zero", "of=\(filler)", "bs=64k"])
        try cluster.startCoordinator(["--spool", spool.path])
        try cluster.startWorker("w")
        let source = try Self.source()
        let output = cluster.directory.appendingPathComponent("out.mp4").path
        let job = try cluster.submit(source, output)
        var reason: String?
        cluster.waitUntil(timeout: 30) {
            reason = (try? Self.statusJSON(cluster, job))?["stalled"] as? String
            return reason != nil
        }
        let said = try #require(reason, "status never said why the job waits")
        #expect(said.contains(spool.path) && said.contains("No space left on device"))
        // While stalled, nothing is leased: the worker sits idle.
        let store = try cluster.openStore()
        defer { store.close() }
        Thread.sleep(forTimeInterval: 3)
        #expect(try store.segments(job).allSatisfy { $0.state == .pending }, "a stalled job is not leased")
        #expect(try store.job(job).state == .encoding)
        try FileManager.default.removeItem(atPath: filler)
        let record = try cluster.wait(job)
        #expect(record.state == .done, "\(record.error ?? "")")
        #expect(record.stalled == nil)
        let events = try store.events(job).map(\.to)
        #expect(events.contains("stalled") && events.contains("resumed"))
        let check = try FrameCheck.compare(source: source, output: output, width: 640, height: 360)
        #expect(check.outputFrames == check.sourceFrames)
    }

    /// An output directory with no room: the stitch fails, the job waits with the reason in `status
    /// --json` (nothing at the output path), and is stitched once space is freed.
    @Test(.enabled(if: getuid() == 0, "mounting a small filesystem needs root: skipped"))
    func aFullOutputDiskStallsTheJobUntilSpaceReturns() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        let outputs = cluster.directory.appendingPathComponent("small-outputs")
        try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: true)
        let mounted = try Tool.run("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", outputs.path])
        try #require(mounted.status == 0, "mount: \(mounted.stderr)")
        defer { _ = try? Tool.run("umount", ["-l", outputs.path]) }
        let filler = outputs.appendingPathComponent("filler").path
        _ = try Tool.run("dd", ["if=/dev/zero", "of=\(filler)", "bs=64k"])
        try cluster.startCoordinator()
        try cluster.startWorker("w")
        let source = try Self.source()
        let output = outputs.appendingPathComponent("out.mp4").path
        let job = try cluster.submit(source, output)
        var reason: String?
        cluster.waitUntil(timeout: 90) {
            reason = (try? Self.statusJSON(cluster, job))?["stalled"] as? String
            return reason != nil
        }
        let said = try #require(reason, "status never said why the job waits")
        #expect(said.hasPrefix("output \(output): no space left on the device"), "\(said)")
        #expect(!FileManager.default.fileExists(atPath: output))
        try FileManager.default.removeItem(atPath: filler)
        let record = try cluster.wait(job)
        #expect(record.state == .done, "\(record.error ?? "")")
        let check = try FrameCheck.compare(source: source, output: output, width: 640, height: 360)
        #expect(check.outputFrames == check.sourceFrames)
    }

    /// The input renamed over by another file mid-job: the job fails with a one-line reason naming the
    /// file, and nothing is left at the output path.
    @Test func anInputReplacedMidJobFailsTheJob() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator()
        try cluster.startWorker("w")
        let input = cluster.directory.appendingPathComponent("input.mp4").path
        try FileManager.default.copyItem(atPath: try Self.source(), toPath: input)
        let other = try Fixtures.media("faults-other.mp4", ["-f", "lavfi", "-i", "testsrc=size=640x360:rate=25:duration=8",
                                                            "-f", "lavfi", "-i", "sine=frequency=880:sample_rate=48000:duration=8",
                                                            "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-c:a", "aac", "-shortest"])
        let output = cluster.directory.appendingPathComponent("out.mp4").path
        let job = try cluster.submit(input, output, ["--preset", "slow"])
        let store = try cluster.openStore()
        defer { store.close() }
        cluster.waitUntil(timeout: 60) { (try? store.job(job).segmentsDone) ?? 0 >= 1 }
        let replacement = cluster.directory.appendingPathComponent("replacement.mp4").path
        try FileManager.default.copyItem(atPath: other, toPath: replacement)
        #expect(rename(replacement, input) == 0)
        let record = try cluster.wait(job)
        #expect(record.state == .failed)
        let error = record.error ?? ""
        #expect(error.hasPrefix("\(input): changed since the job was planned"), "\(error)")
        #expect(!error.contains("\n"))
        #expect(!FileManager.default.fileExists(atPath: output))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cluster.directory.path).filter { $0.contains("tessera-tmp") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// The store stopped for 60 s under a running coordinator: the coordinator waits (and says so), is
    /// still running when the store returns, and the job completes frame-exact.
    @Test func aCoordinatorOutlivesAMinuteWithoutItsStore() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator()
        try cluster.startWorker("w")
        let source = try Self.source()
        let output = cluster.directory.appendingPathComponent("out.mp4").path
        let job = try cluster.submit(source, output, ["--preset", "slow"])
        do {
            let store = try cluster.openStore()
            defer { store.close() }
            cluster.waitUntil(timeout: 60) { (try? store.job(job).segmentsDone) ?? 0 >= 1 }
        }
        let stopped = try Tool.run(cluster.binary, ["db", "stop", "--force"] + cluster.db)
        try #require(stopped.status == 0, "db stop: \(stopped.stderr)")
        Thread.sleep(forTimeInterval: 60)
        #expect(cluster.coordinator?.isRunning == true, "the coordinator exited while the store was down")
        let started = try Tool.run(cluster.binary, ["db", "start"] + cluster.db)
        try #require(started.status == 0, "db start: \(started.stderr)")
        let record = try cluster.wait(job, timeout: 180)
        #expect(record.state == .done, "\(record.error ?? "")\n\(cluster.log("coordinator.log").suffix(3000))")
        #expect(cluster.coordinator?.isRunning == true)
        let log = cluster.log("coordinator.log")
        #expect(log.contains("the job store is unreachable; retrying"))
        #expect(log.contains("the job store is reachable again"))
        let check = try FrameCheck.compare(source: source, output: output, width: 640, height: 360)
        #expect(check.outputFrames == check.sourceFrames)
    }
}
