import Testing
@testable import TesseraCluster

/// Refused messages reach the job's events once per kind and interval, with their count; a flood quarantines.
struct RefusalLedgerTests {
    static func key(_ worker: String = "w", job: String = "j", segment: Int = 0, kind: String = "no lease") -> RefusalLedger.Key {
        .init(worker: worker, job: job, segment: segment, kind: kind)
    }

    @Test func theFirstOfAKindIsRecordedAndTheRestCountedUntilTheIntervalEnds() {
        var ledger = RefusalLedger()
        #expect(ledger.refused(Self.key(), now: 0) == .record(count: 1))
        for t in 1...19 { #expect(ledger.refused(Self.key(), now: Double(t) / 10) == .quiet) }
        #expect(ledger.refused(Self.key(kind: "wrong token"), now: 2) == .record(count: 1), "another kind is recorded at once")
        #expect(ledger.refused(Self.key(segment: 1), now: 2) == .record(count: 1), "so is another segment")
        #expect(ledger.due(now: 9).isEmpty)
        let due = ledger.due(now: 10)
        #expect(due.count == 1 && due.first?.key == Self.key() && due.first?.count == 19)
        #expect(ledger.due(now: 25).isEmpty, "nothing new")
        #expect(ledger.refused(Self.key(), now: 40) == .record(count: 1), "a kind quiet for an interval starts again")
    }

    @Test func aWorkerRefusedTooOftenInOneIntervalIsQuarantinedOnce() {
        var ledger = RefusalLedger()
        var decisions: [RefusalLedger.Decision] = []
        for n in 0..<10_000 { decisions.append(ledger.refused(Self.key(segment: n % 7), now: Double(n) / 10_000)) }
        #expect(decisions.filter { if case .quarantine = $0 { true } else { false } } == [.quarantine(count: 100)])
        #expect(decisions.filter { if case .record = $0 { true } else { false } }.count == 7, "one record per segment")
        // Refusals spread out over time do not add up to a quarantine.
        var slow = RefusalLedger()
        for n in 0..<1000 { #expect(slow.refused(Self.key(), now: Double(n) * 0.2) != .quarantine(count: 100)) }
    }
}
