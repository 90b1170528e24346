import Foundation
import Testing
import TesseraCore
import TesseraStore
import TesseraTestSupport

/// Audit by re-encoding: a listed worker that damages its results under its own valid leases (well-formed, the
/// checksum recomputed) is caught by a second encode of another key, decided by a third, and quarantined. Real
/// coordinator and worker processes with CURVE keys on loopback.
@Suite(.serialized) struct AuditClusterTests {
    /// Decode errors ffmpeg reports for the file (empty: it decodes clean).
    static func decodeErrors(_ path: String) throws -> String {
        try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "null", "-"]).stderr
    }

    @Test func anAuditCatchesAndQuarantinesAWorkerThatDamagesItsResults() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.secure()
        let keys = try ["honest-1", "honest-2", "damaging"].map { try cluster.keygen($0) }
        try cluster.authorize(keys)
        try cluster.startCoordinator(["--audit-wait", "60"])
        try cluster.startWorker("honest-1", key: keys[0])
        try cluster.startWorker("honest-2", key: keys[1])
        // Every result of this worker from its first on has 16 bytes inverted, its checksum made after.
        try cluster.startWorker("damaging", key: keys[2], ["--fault-corrupt-from", "1"])
        cluster.waitUntil(timeout: 20) { cluster.log("coordinator.log").components(separatedBy: "worker joined").count == 4 }
        let source = try SecureClusterTests.videoOnlyInput()
        let store = try cluster.openStore()
        defer { store.close() }

        // Audit off: the damaged segment goes through every check into the output.
        let unaudited = cluster.directory.appendingPathComponent("unaudited.mp4").path
        let first = try cluster.submit(source, unaudited, ["--audit", "0"])
        let firstRecord = try cluster.wait(first, timeout: 180)
        #expect(firstRecord.state == .done, "\(firstRecord.error ?? "")")
        #expect(SecureClusterTests.leasedTo(try store.events(first)).contains("damaging"), "the damaging worker encoded a segment")
        #expect(try store.workerAudits().allSatisfy { !$0.isQuarantined })

        // Audit on, every segment: the job finishes frame-exact and clean, the worker is quarantined and named.
        let audited = cluster.directory.appendingPathComponent("audited.mp4").path
        let second = try cluster.submit(source, audited, ["--audit", "1"])
        let secondRecord = try cluster.wait(second, timeout: 240)
        #expect(secondRecord.state == .done, "\(secondRecord.error ?? "")")
        #expect(try SecureClusterTests.frameExact(source, audited))
        #expect(try Self.decodeErrors(audited).isEmpty)
        let events = try store.events(second)
        let mismatch = events.first { $0.to == "audit-mismatch" }
        #expect(mismatch?.detail?.contains("worker damaging") == true, "\(events.map { "\($0.to): \($0.detail ?? "")" })")
        #expect(events.contains { $0.to == "audit" && $0.detail?.hasPrefix("audited ") == true })
        let records = try store.workerAudits()
        let damaging = try cluster.publicKey(keys[2])
        #expect(records.first { $0.identity == damaging }?.isQuarantined == true, "\(records)")
        #expect(records.filter(\.isQuarantined).count == 1, "only the damaging key: \(records)")
        #expect(cluster.log("coordinator.log").contains("worker quarantined"))
        // The job's JSON shows what its audits cost and whom they quarantined.
        let status = try Tool.run(cluster.binary, ["status", second, "--json"] + cluster.db)
        let audit = try #require(try JSONSerialization.jsonObject(with: Data(status.text.utf8)) as? [String: Any])["audit"] as? [String: Any]
        #expect(audit?["quarantined"] as? [String] == ["damaging"] && (audit?["mismatches"] as? Int ?? 0) >= 1, "\(status.text)")

        // What the audit bought: the unaudited output carries the damage (the same plan, one segment's bytes
        // differ), the audited one does not.
        let damaged = try Data(contentsOf: URL(fileURLWithPath: unaudited)), clean = try Data(contentsOf: URL(fileURLWithPath: audited))
        #expect(damaged.count == clean.count && damaged != clean)

        // The quarantine stays in the store until an operator lifts it, by worker id or key.
        let listed = try Tool.run(cluster.binary, ["workers", "--json"] + cluster.db)
        #expect(listed.status == 0 && listed.text.contains(damaging) && listed.text.contains("quarantineReason"), "\(listed.text)")
        let lifted = try Tool.run(cluster.binary, ["workers", "--lift", "damaging"] + cluster.db)
        #expect(lifted.status == 0 && lifted.text.contains(damaging), "\(lifted.stderr)")
        #expect(try store.workerAudits().allSatisfy { !$0.isQuarantined })
        cluster.waitUntil(timeout: 15) { cluster.log("coordinator.log").contains("worker's quarantine lifted") }
        #expect(cluster.log("coordinator.log").contains("worker's quarantine lifted"))
    }
}
