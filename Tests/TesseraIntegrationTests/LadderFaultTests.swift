import Foundation
import Testing
import TesseraStore
import TesseraTestSupport

/// A ladder job survives the faults a single output does: `kill -9` of a worker mid-job, and of the coordinator with
/// another one taking the job over. Real coordinator and worker processes on loopback, a real PostgreSQL.
@Suite(.serialized) struct LadderFaultTests {
    static let heights = LadderTests.heights
    /// Two seconds per media segment over 8 s: four segments per rung.
    static let ladderOptions = ["--ladder", LadderTests.ladder, "--hls-time", "2", "--preset", "slow"]

    /// Every rung listed in the master playlist holds every source frame in its place, with keyframes at the same
    /// instants in every rung.
    static func expectCompleteAndFrameExact(_ folder: URL, source: String) throws {
        let output = try LadderFolder(folder: folder)
        #expect(output.variants.count == heights.count, "\(output.master)")
        let sourceFrames = try Probe.frames(source)
        var keyframes: [[String]] = []
        for variant in output.variants {
            let playlist = output.path(variant.uri)
            #expect(try Probe.frames(playlist) == sourceFrames, "\(variant.uri)")
            let check = try Probe.frameExactness(source: source, output: playlist)
            #expect(check.problems.isEmpty, "\(variant.uri): \(check.problems.prefix(5))")
            keyframes.append(try Probe.keyframeTimes(playlist))
        }
        #expect(keyframes.allSatisfy { $0 == keyframes[0] }, "keyframes aligned: \(keyframes)")
        let audio = try #require(try output.audio())
        #expect(!audio.segments.isEmpty)
        let read = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output.path("master.m3u8"), "-map", "0", "-f", "null", "-"])
        #expect(read.status == 0 && read.stderr.isEmpty, "\(read.stderr.suffix(800))")
    }

    static func diagnostics(_ cluster: Cluster, _ store: JobStore, _ job: String, logs: [String]) -> String {
        let events = ((try? store.events(job)) ?? []).map { "\($0.at) \($0.segmentIndex ?? -1) \($0.from ?? "") -> \($0.to) \($0.detail ?? "")" }
        return (logs.map { "--- \($0)\n" + String(cluster.log($0).suffix(2000)) } + ["--- events"] + events).joined(separator: "\n")
    }

    /// kill -9 of the only worker while it encodes a ladder segment: the segment goes to another worker, and every
    /// rung comes out whole.
    @Test func aWorkerKilledMidLadderLeavesACompleteOutput() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator()
        try cluster.startWorker("victim")
        let source = try FaultToleranceTests.source()
        let folder = cluster.directory.appendingPathComponent("out")
        let job = try cluster.submit(source, folder.appendingPathComponent("master.m3u8").path, Self.ladderOptions)
        let store = try cluster.openStore()
        defer { store.close() }
        try cluster.waitUntil(timeout: 60) { try store.segments(job).contains { $0.state == .leased } }
        Thread.sleep(forTimeInterval: 0.5)
        cluster.kill9(cluster.workers["victim"])
        try cluster.startWorker("survivor")
        let record = try cluster.wait(job, timeout: 300)
        #expect(record.state == .done, "\(record.error ?? "")\n\(Self.diagnostics(cluster, store, job, logs: ["coordinator.log", "survivor.log"]))")
        #expect(try store.events(job).contains { $0.detail?.contains("victim went silent") == true }, "the kill was seen mid-job")
        try Self.expectCompleteAndFrameExact(folder, source: source)
    }

    /// kill -9 of the coordinator holding a ladder job, a second coordinator running beside it on the same store and
    /// spool: the second takes the job over and writes every rung whole.
    @Test func aSecondCoordinatorFinishesALadderOfAKilledOne() throws {
        let cluster = try Cluster()
        var second: Process?
        defer {
            if let second, second.isRunning { second.terminate(); second.waitUntilExit() }
            cluster.shutdown()
        }
        let takeover = ["--takeover-after", "3"]
        try cluster.startCoordinator(["--id", "c1"] + takeover)
        let secondEndpoint = "tcp://127.0.0.1:\(Cluster.freePort())"
        cluster.workers["w"] = try cluster.spawn(["worker", "--connect", cluster.endpoint, "--connect", secondEndpoint, "--id", "w",
                                                  "--heartbeat", "0.5", "--liveness", Cluster.liveness, "--insecure"], log: "w.log")
        let source = try FaultToleranceTests.source()
        let folder = cluster.directory.appendingPathComponent("out")
        let job = try cluster.submit(source, folder.appendingPathComponent("master.m3u8").path, Self.ladderOptions)
        let store = try cluster.openStore()
        defer { store.close() }
        try cluster.waitUntil(timeout: 90) { try store.holds(job, coordinator: "c1") && store.job(job).segmentsDone >= 1 }
        try #require(try store.holds(job, coordinator: "c1") && store.job(job).segmentsDone >= 1,
                     "c1 never got going\n\(Self.diagnostics(cluster, store, job, logs: ["coordinator.log", "w.log"]))")
        second = try cluster.spawn(["coordinator", "--bind", secondEndpoint, "--heartbeat", "0.5", "--liveness", Cluster.liveness, "--insecure", "--id", "c2"] + takeover + cluster.db,
                                   log: "c2.log")
        Thread.sleep(forTimeInterval: 1)
        try #require(try store.job(job).state != .done, "the job ended before the coordinator could be killed")
        cluster.kill9(cluster.coordinator)
        let record = try cluster.wait(job, timeout: 300)
        let logs = ["coordinator.log", "c2.log", "w.log"]
        #expect(record.state == .done, "\(record.error ?? "")\n\(Self.diagnostics(cluster, store, job, logs: logs))")
        #expect(try store.holds(job, coordinator: "c2"), "\(Self.diagnostics(cluster, store, job, logs: logs))")
        #expect(try store.events(job).contains { $0.to == "adopted" && $0.detail?.contains("c2 took the job over from c1") == true })
        try Self.expectCompleteAndFrameExact(folder, source: source)
    }
}
