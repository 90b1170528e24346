import Foundation
import Testing
import TesseraCore
import TesseraStore
import TesseraTesting

/// Claims in the coordinator's order: the store lists the queue with each job's size as submitted and takes the
/// first job of the order it is given that it still may, on PostgreSQL as in memory.
@Suite(.serialized) struct ClaimOrderTests {
    @Test func theQueueIsListedAndClaimedInTheGivenOrder() throws {
        let (postgres, _) = try TestDatabase.store()
        defer { postgres.close() }
        let expected = try Self.script(postgres) { priority, coordinator, work in
            try postgres.submit(input: "/in.mp4", output: "/out.mp4", spec: JobSpec(), coordinator: coordinator, priority: priority, work: work)
        }
        let database = InMemoryJobDatabase()
        let memory = database.open()
        defer { memory.close() }
        let transcript = try Self.script(memory) { priority, coordinator, work in
            try database.submit(input: "/in.mp4", output: "/out.mp4", spec: JobSpec(), coordinator: coordinator, priority: priority, work: work)
        }
        #expect(transcript == expected)
        #expect(expected == [
            "queued c1: a 50 1000000000.0, b 50 unknown, d 80 2000.0",
            "claim c1 [c b a]: b", "claim c1 [c b a]: a", "claim c1 [c b a]: none",
            "claim c2 outranking [d]: none", "claim c1 outranking [d]: d", "queued c1: none",
        ])
    }

    /// Jobs submitted with (priority, assigned coordinator, work); returns each answer, jobs named by letter.
    static func script(_ store: any CoordinatorStore, submit: (Int, String?, Double?) throws -> String) throws -> [String] {
        let a = try submit(50, nil, 1e9), b = try submit(50, nil, nil), c = try submit(50, "c2", 10), d = try submit(80, nil, 2000)
        let names = [a: "a", b: "b", c: "c", d: "d"]
        var out: [String] = []
        func queued() throws {
            let jobs = try store.queuedJobs(coordinator: "c1").sorted { names[$0.id]! < names[$1.id]! }
            #expect(jobs.allSatisfy { $0.waited >= 0 && $0.waited < 60 })
            let listed = jobs.map { "\(names[$0.id]!) \($0.priority) \($0.work.map { "\($0)" } ?? "unknown")" }
            out.append("queued c1: \(listed.isEmpty ? "none" : listed.joined(separator: ", "))")
        }
        func claim(_ coordinator: String, _ ranked: [String], outranking: Bool = false) throws {
            let claimed = try store.claimQueuedJob(coordinator: coordinator, ranked: ranked, outranking: outranking)
            out.append("claim \(coordinator)\(outranking ? " outranking" : "") [\(ranked.map { names[$0]! }.joined(separator: " "))]: "
                       + (claimed.map { names[$0.id]! } ?? "none"))
        }
        try queued()
        // c is another coordinator's: c1 skips it, and takes the rest in the order it gives, not by priority.
        for _ in 0..<3 { try claim("c1", [c, b, a]) }
        // c1 has b's segment pending: d (80) outranks it; c2 has nothing pending, so nothing to outrank.
        _ = try store.addSegments(b, [PlannedSegment(index: 0, startPTS: 0, endPTS: 10, firstPacket: 0, lastPacket: 9, frameCount: 10,
                                                      preRollPackets: 0, entry: .idr)], framePixels: 100)
        try claim("c2", [d], outranking: true)
        try claim("c1", [d], outranking: true)
        try queued()
        return out
    }
}
