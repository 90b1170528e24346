import Foundation
import Testing
import TesseraCore
import TesseraStore
import TesseraTesting
@testable import TesseraCluster

/// Audit by re-encoding through the coordinator's loop, its spooler and real encodes, the store in memory: honest
/// workers agree on every segment, and a lone worker's audits are given up without holding its job.
@Suite(.serialized)
struct CoordinatorAuditTests {
    /// With one libx264 thread each, or two: an audited job's tasks ask for encodes that repeat their bytes.
    @Test(arguments: [1, 2]) func twoHonestWorkersAgreeOnEverySegment(threads: Int) throws {
        let cluster = try InProcessCluster()
        defer { cluster.shutdown() }
        let job = try cluster.submit(try cluster.makeClip(), output: "out.mp4", audit: 1)
        cluster.startWorker("worker-a", threads: threads)
        cluster.startWorker("worker-b", threads: threads)
        let ended = try #require(try cluster.waitForEnd(job.id, timeout: 60))
        #expect(ended.state == .done, "\(ended.error ?? "")")
        let store = cluster.database.open()
        defer { store.close() }
        let records = try ["worker-a", "worker-b"].compactMap { try store.auditRecord($0) }
        // Each audit counts for the original's key and the auditor's.
        #expect(records.reduce(0) { $0 + $1.matched } == 2 * ended.segmentsTotal, "\(records)")
        #expect(records.allSatisfy { $0.mismatched == 0 && !$0.isQuarantined })
        let events = cluster.database.events(job.id)
        #expect(events.contains { $0.to == "audit" && $0.detail?.hasPrefix("audited \(ended.segmentsTotal) segment(s)") == true },
                "\(events.map { "\($0.to) \($0.detail ?? "")" })")
        #expect(try InProcessCluster.probe(job.output).frames == 50)
        #expect(cluster.failures.current.isEmpty)
        let audit = try #require(ended.audit, "the job's record shows its audits")
        #expect(audit.segments == ended.segmentsTotal && audit.mismatches == 0 && audit.notAudited == 0 && audit.quarantined.isEmpty)
        #expect(audit.extraEncodeSeconds > 0)
    }

    @Test func aLoneWorkersAuditsAreGivenUpAndItsJobFinishes() throws {
        let cluster = try InProcessCluster()
        defer { cluster.shutdown() }
        let job = try cluster.submit(try cluster.makeClip(), output: "out.mp4", audit: 1)
        cluster.startWorker("worker-alone", slots: 2)
        let ended = try #require(try cluster.waitForEnd(job.id, timeout: 60))
        #expect(ended.state == .done, "\(ended.error ?? "")")
        let waived = cluster.database.events(job.id).filter { $0.to == "audit-waived" }
        #expect(waived.count == ended.segmentsTotal)
        #expect(waived.allSatisfy { $0.detail?.contains("not audited: no worker with another key connected") == true })
        #expect(try cluster.database.open().auditRecord("worker-alone") == nil, "nothing compared")
    }
}
