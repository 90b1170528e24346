import Foundation
import Logging
import TesseraCore
import TesseraStore
import ZMQKit

/// Audit by re-encoding (`AuditBook`), carried out: audited results, audit tasks, verdicts and quarantines.
extension CoordinatorLoop {
    /// A worker's key: its CURVE public key, or its id on a plaintext transport.
    func identity(of worker: String) -> String { machine.peers[worker]?.key ?? worker }

    /// A worker joined: its audit record read, and false when its key is quarantined (it is told, and gets nothing).
    func admitAudited(_ worker: String, key: String?, capabilities: [String: String], now: Double) throws -> Bool {
        let identity = key ?? worker
        profiles[worker] = AuditBook.profile(capabilities)
        if profiles[worker] == nil, audits.configuration.rate > 0 {
            logger.info("this worker's results are not audited: libx264 with more than one thread does not repeat its bytes",
                        metadata: ["worker.id": "\(worker)", "worker.threads": "\(capabilities["threads"] ?? "?")"])
        }
        guard let record = try store.auditRecord(identity) else { return true }
        audits.known(identity, audited: record.audited)
        guard let reason = record.quarantineReason else { return true }
        machine.quarantine(worker)
        quarantinedKeys[worker] = identity
        tell(worker, Self.quarantinedRefusal(reason), now: now) {
            logger.warning("refused a quarantined worker", metadata: ["worker.id": "\(worker)", "worker.key": "\(identity)", "reason": "\(reason)"])
        }
        return false
    }

    static func quarantinedRefusal(_ why: String) -> ClusterMessage.Refusal {
        .init(.quarantined, "the coordinator quarantined this worker (\(why)); `tessera workers --lift ID` lifts it")
    }

    /// A result accepted under its lease. True when it answered an audit task: compared, never spooled. Otherwise
    /// it may open an audit (a secret draw against the job's rate) and goes to the spooler as any result.
    func audited(_ header: ClusterMessage.ResultHeader, _ payload: ReceivedFrame, from worker: String) throws -> Bool {
        let ref = header.segment, identity = identity(of: worker)
        if audits.isAuditLease(ref, worker: worker, token: header.token) {
            guard let (content, seconds) = AuditContent.of(payload) else {
                audits.unanswered(ref)
                return true
            }
            CoordinatorMetrics.auditEncodeSeconds.increment(by: seconds)
            let encode = AuditBook.Encode(worker: worker, identity: identity, content: content, encodeSeconds: seconds)
            try settle(ref, audits.answered(ref, with: encode))
            return true
        }
        let rate = auditRates[ref.jobID]
        var random = SystemRandomNumberGenerator()
        guard loaded[ref.jobID] != nil, let profile = profiles[worker], audits.shouldAudit(identity, draw: Double.random(in: 0..<1, using: &random), rate: rate),
              let (content, seconds) = AuditContent.of(payload) else { return false }
        audits.opened(ref, attempt: header.attempt, profile: profile,
                      original: .init(worker: worker, identity: identity, content: content, encodeSeconds: seconds))
        return false
    }

    /// Sends waiting audit tasks to free eligible workers: the same task, under a lease of the coordinator's own.
    func dispatchAudits() throws {
        guard !audits.open.isEmpty else { return }
        for ref in audits.waiting {
            // Its job went to another coordinator: its audits go with this one's memory of it.
            guard loaded[ref.jobID] != nil else {
                _ = audits.jobDropped(ref.jobID)
                continue
            }
            guard let worker = audits.pick(ref, among: auditCandidates), let attempt = audits.open[ref]?.attempt else { continue }
            let token = Self.auditToken()
            try send(ref, to: worker, attempt: attempt, token: token)
            if machine.peers[worker]?.inFlight[ref] == token { audits.assigned(ref, worker: worker, token: token, now: Stopwatch.now) }
        }
    }

    /// The connected workers as audit candidates, with their free slots.
    var auditCandidates: [AuditBook.Candidate] {
        machine.peers.map { AuditBook.Candidate(worker: $0.key, identity: $0.value.key ?? $0.key, profile: profiles[$0.key] ?? "", free: $0.value.free) }
    }

    /// A lease token as the store makes them (32 hex digits of a random UUID): an audit task looks like any task.
    static func auditToken() -> String {
        var random = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// Audit tasks of workers gone go to others; audits no eligible worker can take are given up after a while.
    func tendAudits(now: Double) throws {
        guard !audits.open.isEmpty else { return }
        let peers = machine.peers
        for (ref, worker) in audits.leasesLost(inFlight: { peers[$1]?.inFlight[$0] == $2 }, now: now, timeout: options.leaseSeconds) {
            // Out longer than a lease lasts: another worker gets it, and this one's slot is free again.
            machine.taskEnded(ref, worker: worker)
        }
        for waiver in audits.waive(connected: auditCandidates, now: now) {
            let ref = waiver.segment
            let detail = waiver.encodes.count == 1
                ? "segment \(ref.index) not audited: no worker with another key connected within \(Int(audits.configuration.wait)) s"
                : "segment \(ref.index): encodes of workers \(waiver.encodes.map(\.worker).joined(separator: ", ")) differ and no third key was connected to decide; kept the first"
            try store.recordNote(ref.jobID, kind: "audit-waived", detail: detail)
            try recordAuditRecord(ref.jobID)
            logger.warning("audit given up", metadata: ["job.id": "\(ref.jobID)", "segment.index": "\(ref.index)", "reason": "\(detail)"])
            machine.auditSettled()
        }
        if !audits.waiting.isEmpty { machine.auditSettled() }
    }

    /// Carries out what an audit's encodes say.
    func settle(_ ref: SegmentRef, _ verdict: AuditBook.Verdict) throws {
        switch verdict {
        case .open:
            return
        case .disputed(let original, let auditor):
            CoordinatorMetrics.auditMismatches.increment()
            logger.warning("audit mismatch: a third encode decides", metadata: ["job.id": "\(ref.jobID)", "segment.index": "\(ref.index)",
                                                                               "worker.original": "\(original.worker)", "worker.auditor": "\(auditor.worker)"])
            return
        case .matched(let original, let auditor):
            CoordinatorMetrics.audits.increment()
            try store.recordAudit(original.identity, worker: original.worker, matched: true)
            try store.recordAudit(auditor.identity, worker: auditor.worker, matched: true)
        case .decided(let culprit, let agreeing, let originalWrong):
            CoordinatorMetrics.audits.increment()
            for encode in agreeing { try store.recordAudit(encode.identity, worker: encode.worker, matched: true) }
            try store.recordAudit(culprit.identity, worker: culprit.worker, matched: false)
            let why = "its encode of segment \(ref.index) of job \(ref.jobID) differs from those of workers \(agreeing.map(\.worker).joined(separator: " and "))"
            try store.recordNote(ref.jobID, kind: "audit-mismatch",
                                 detail: "segment \(ref.index): worker \(culprit.worker) (key \(culprit.identity)) disagreed with workers "
                                    + "\(agreeing.map(\.worker).joined(separator: " and ")); quarantined" + (originalWrong ? ", segment encoded again" : ""))
            if originalWrong { try reencode(ref, reason: "audit: worker \(culprit.worker)'s result differed from two others") }
            try quarantineCulprit(culprit, because: why, segment: ref)
        case .undecided(let encodes):
            CoordinatorMetrics.audits.increment()
            try store.recordNote(ref.jobID, kind: "audit-mismatch",
                                 detail: "segment \(ref.index): encodes of workers \(encodes.map(\.worker).joined(separator: ", ")) all differ; encoded again")
            try reencode(ref, reason: "audit: three encodes differ")
        }
        try recordAuditRecord(ref.jobID)
        machine.auditSettled()
    }

    /// The job's audit figures as `status --json` shows them, kept current as its audits settle.
    func recordAuditRecord(_ job: String) throws {
        guard let cost = audits.costs[job] else { return }
        try store.recordJobAudit(job, JobAudit(segments: cost.audited, extraEncodeSeconds: cost.extraSeconds, mismatches: cost.mismatches,
                                               notAudited: cost.waived, quarantined: cost.quarantined))
    }

    /// A segment recorded done is encoded again.
    func reencode(_ ref: SegmentRef, reason: String) throws {
        try spooler.drain()
        try store.redo(ref.jobID, ref.index, reason: reason)
        audits.segmentReopened(ref)
        machine.reopened(ref)
    }

    /// A key whose encode disagreed with two others: quarantined in the store, its connected workers dropped, and
    /// its results in this coordinator's unfinished jobs encoded again.
    func quarantineCulprit(_ culprit: AuditBook.Encode, because why: String, segment: SegmentRef) throws {
        try store.quarantine(culprit.identity, worker: culprit.worker, reason: why)
        for (id, peer) in machine.peers where (peer.key ?? id) == culprit.identity {
            try quarantine(id, because: why, segment: segment)
        }
        quarantinedKeys[culprit.worker] = culprit.identity
        for ref in audits.culpritFound(culprit.identity) {
            try reencode(ref, reason: "audit: worker \(culprit.worker) quarantined")
        }
        for job in loaded.keys.sorted() {
            for record in try store.segments(job) where record.workerID == culprit.worker && record.state == .done {
                try reencode(SegmentRef(jobID: job, index: record.index), reason: "worker \(culprit.worker) quarantined")
            }
        }
    }

    /// Quarantines as the store has them now: lifted ones (`tessera workers --lift`) let their workers join again,
    /// and connected workers whose key another coordinator quarantined are dropped here too.
    func followQuarantines() throws {
        let quarantined = try store.quarantinedIdentities()
        for (worker, identity) in quarantinedKeys.sorted(by: { $0.key < $1.key }) where !quarantined.contains(identity) {
            quarantinedKeys[worker] = nil
            machine.unquarantine(worker)
            logger.info("worker's quarantine lifted", metadata: ["worker.id": "\(worker)"])
        }
        for (worker, peer) in machine.peers.sorted(by: { $0.key < $1.key }) where quarantined.contains(peer.key ?? worker) {
            try spooler.drain()
            machine.quarantine(worker)
            held[worker] = nil
            quarantinedKeys[worker] = peer.key ?? worker
            try store.releaseAll(worker: worker, reason: "worker \(worker) quarantined", countAttempt: false, coordinator: options.coordinatorID)
            logger.warning("dropped a worker quarantined in the store", metadata: ["worker.id": "\(worker)"])
            tell(worker, Self.quarantinedRefusal("its key is quarantined in the job store"), now: Stopwatch.now)
        }
    }

    /// What audits cost the job, in its events, once it is stitched.
    func recordAuditCost(_ job: String) throws {
        guard let cost = audits.costs[job], cost.audited > 0 else { return }
        try store.recordNote(job, kind: "audit", detail: String(format: "audited %d segment(s), %.1f s of extra encoding, %d mismatch(es), %d not audited",
                                                                cost.audited, cost.extraSeconds, cost.mismatches, cost.waived))
    }
}
