import TesseraCore
import TesseraStore

/// What `JobStore+Audits` does, on the in-memory tables.
extension InMemoryCoordinatorStore {
    public func auditRecord(_ identity: String) throws(StoreError) -> WorkerAudit? {
        try transaction { $0.audits[identity] }
    }

    public func recordAudit(_ identity: String, worker: String, matched: Bool) throws(StoreError) {
        try transaction { t in
            var record = t.audits[identity] ?? WorkerAudit(identity: identity, workerID: worker)
            record.workerID = worker
            record.audited += 1
            if matched { record.matched += 1 } else { record.mismatched += 1 }
            t.audits[identity] = record
        }
    }

    public func quarantinedIdentities() throws(StoreError) -> Set<String> {
        try transaction { Set($0.audits.values.filter(\.isQuarantined).map(\.identity)) }
    }

    public func quarantine(_ identity: String, worker: String, reason: String) throws(StoreError) {
        try transaction { t in
            var record = t.audits[identity] ?? WorkerAudit(identity: identity, workerID: worker)
            record.workerID = worker
            if record.quarantineReason == nil { record.quarantineReason = reason }
            t.audits[identity] = record
        }
    }
}
