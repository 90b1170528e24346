import Foundation
import Testing
import TesseraCore
import TesseraStore
import TesseraTesting

/// `lease(slots:ranked:)` follows the coordinator's order: each ranked job's pending segments before the next
/// job's, longest first within a job; jobs not ranked, not encoding or another coordinator's get nothing.
/// PostgreSQL and the in-memory store answer alike.
struct RankedLeaseTests {
    @Test func leasesFollowTheRankedJobsInTurn() throws {
        let (expected, transcript) = try InMemoryStoreParityTests.onBothStores(Self.script)
        #expect(transcript == expected)
        // b before a whatever their priorities, each one's longest segment first; c not ranked, d another's.
        #expect(transcript == [
            "lease: w1 b#1, w2 b#0, w1 a#2",
            "lease again: w2 a#0, w2 a#1",
            "lease with nothing ranked: ",
        ])
    }

    /// Queues a (priority 80), b (20), c (50) for c1 and d for c2, plans them, and leases in the order b, a, d.
    static func script(_ store: any CoordinatorStore, submit: (Int, String?) throws -> String) throws -> [String] {
        let a = try submit(80, nil), b = try submit(20, nil), c = try submit(50, nil), d = try submit(50, "c2")
        let names = [a: "a", b: "b", c: "c", d: "d"]
        for worker in ["w1", "w2"] { try store.heartbeat(worker: worker, host: "h", capabilities: [:], key: nil) }
        for _ in 0..<3 { _ = try store.claimQueuedJob(coordinator: "c1", only: nil, outranking: false) }
        _ = try store.claimQueuedJob(coordinator: "c2", only: nil, outranking: false)
        let plan = InMemoryStoreParityTests.plan
        try store.addSegments(a, plan([10, 10, 30]), framePixels: 100, outputs: 1)
        try store.addSegments(b, plan([10, 20]), framePixels: 100, outputs: 1)
        try store.addSegments(c, plan([50]), framePixels: 100, outputs: 1)
        try store.addSegments(d, plan([50]), framePixels: 100, outputs: 1)
        func leased(_ leases: [(worker: String, lease: Lease)]) -> String {
            leases.map { "\($0.worker) \(names[$0.lease.jobID] ?? "?")#\($0.lease.index)" }.joined(separator: ", ")
        }
        var out: [String] = []
        out.append("lease: " + leased(try store.lease(slots: ["w1", "w2", "w1"], seconds: 60, ranked: [b, a, d], attemptLimit: 3, coordinator: "c1")))
        out.append("lease again: " + leased(try store.lease(slots: ["w2", "w2", "w2"], seconds: 60, ranked: [b, a, d], attemptLimit: 3, coordinator: "c1")))
        out.append("lease with nothing ranked: " + leased(try store.lease(slots: ["w1"], seconds: 60, ranked: [], attemptLimit: 3, coordinator: "c1")))
        return out
    }
}
