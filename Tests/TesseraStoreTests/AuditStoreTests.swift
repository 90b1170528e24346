import Testing
import TesseraCore
import TesseraStore
import TesseraTesting

/// Worker keys' audit records and quarantines (migration 14), in PostgreSQL and in memory alike.
struct AuditStoreTests {
    static func script(_ store: any CoordinatorStore) throws -> [WorkerAudit?] {
        try store.recordAudit("key-a", worker: "a", matched: true)
        try store.recordAudit("key-a", worker: "a2", matched: true)
        try store.recordAudit("key-b", worker: "b", matched: false)
        try store.quarantine("key-b", worker: "b", reason: "its encode differs")
        try store.quarantine("key-b", worker: "b", reason: "a second reason")
        try store.quarantine("key-c", worker: "c", reason: "100 refused messages")
        return try ["key-a", "key-b", "key-c", "key-none"].map { try store.auditRecord($0) }.map {
            // The time is PostgreSQL's: compared by presence.
            $0.map { var r = $0; r.quarantinedAt = r.quarantinedAt == nil ? nil : "set"; return r }
        }
    }

    @Test func recordsAndQuarantinesAnswerAlikeAndLiftByIdOrKey() throws {
        let (postgres, _) = try TestDatabase.store()
        defer { postgres.close() }
        let expected = try Self.script(postgres)
        let memory = InMemoryJobDatabase().open()
        defer { memory.close() }
        let inMemory = try Self.script(memory)
        #expect(expected == inMemory.map { $0.map { var r = $0; r.quarantinedAt = r.quarantineReason == nil ? nil : "set"; return r } })
        #expect(expected[0] == WorkerAudit(identity: "key-a", workerID: "a2", audited: 2, matched: 2))
        #expect(expected[1] == WorkerAudit(identity: "key-b", workerID: "b", audited: 1, mismatched: 1,
                                           quarantineReason: "its encode differs", quarantinedAt: "set"), "the first reason stays")
        #expect(expected[2]?.isQuarantined == true && expected[3] == nil)
        #expect(try postgres.quarantinedIdentities() == ["key-b", "key-c"])
        #expect(try memory.quarantinedIdentities() == ["key-b", "key-c"])

        #expect(try postgres.liftQuarantine("b") == ["key-b"], "by the worker id")
        #expect(try postgres.liftQuarantine("key-c") == ["key-c"], "by the key")
        #expect(try postgres.liftQuarantine("key-a").isEmpty, "not quarantined")
        #expect(try postgres.workerAudits().map(\.identity) == ["key-a", "key-b", "key-c"])
        #expect(try postgres.workerAudits().allSatisfy { !$0.isQuarantined })
    }
}
