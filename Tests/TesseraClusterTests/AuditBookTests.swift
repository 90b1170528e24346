import Testing
import TesseraCore
@testable import TesseraCluster

/// Audit by re-encoding, decided without I/O: which results are audited, who encodes them again, and what the
/// compared encodes say.
struct AuditBookTests {
    typealias Ref = ClusterMessage.SegmentRef
    static let segment = Ref(jobID: "job", index: 3)

    static func encode(_ worker: String, _ content: [UInt8], key: String? = nil) -> AuditBook.Encode {
        .init(worker: worker, identity: key ?? "key-\(worker)", content: content, encodeSeconds: 1)
    }

    static func candidate(_ worker: String, free: Int = 1, profile: String = "p") -> AuditBook.Candidate {
        .init(worker: worker, identity: "key-\(worker)", profile: profile, free: free)
    }

    @Test func aNewKeysFirstResultsAreAuditedThenTheRateDecides() {
        var book = AuditBook(.init(rate: 0.05, firstResults: 3))
        for n in 0..<3 {
            #expect(book.shouldAudit("key-a", draw: 0.99, rate: nil), "result \(n) of a new key")
            book.opened(Ref(jobID: "job", index: n), attempt: 1, profile: "p", original: Self.encode("a", [1]))
        }
        #expect(!book.shouldAudit("key-a", draw: 0.99, rate: nil))
        #expect(book.shouldAudit("key-a", draw: 0.01, rate: nil))
        #expect(!book.shouldAudit("key-a", draw: 0.01, rate: 0), "a job's 0 turns it off")
        #expect(book.shouldAudit("key-a", draw: 0.99, rate: 1), "a job's 1 audits every result")
        #expect(!AuditBook(.init(rate: 0)).shouldAudit("key-new", draw: 0, rate: nil), "off: not even a new key's")
        var known = AuditBook(.init(rate: 0.05, firstResults: 3))
        known.known("key-b", audited: 7)
        #expect(!known.shouldAudit("key-b", draw: 0.5, rate: nil), "a key audited before, by the store's record")
    }

    @Test func theAuditTaskGoesToAnotherKeyWithTheSameProfile() {
        var book = AuditBook()
        book.opened(Self.segment, attempt: 2, profile: "p", original: Self.encode("a", [1]))
        #expect(book.holds("job") && !book.holds("other"))
        #expect(book.pick(Self.segment, among: [Self.candidate("a", free: 4)]) == nil, "never its own key")
        #expect(book.pick(Self.segment, among: [Self.candidate("b", profile: "threads=4")]) == nil, "never another encoder profile")
        #expect(book.pick(Self.segment, among: [Self.candidate("b", free: 0)]) == nil, "a free slot only")
        #expect(book.pick(Self.segment, among: [Self.candidate("b"), Self.candidate("c", free: 2)]) == "c")
        book.assigned(Self.segment, worker: "c", token: "t")
        #expect(book.waiting.isEmpty && book.isAuditLease(Self.segment, worker: "c", token: "t"))
        #expect(!book.isAuditLease(Self.segment, worker: "c", token: "other"))
        #expect(book.leasesLost(inFlight: { _, _, _ in true }, now: 100, timeout: 600).isEmpty)
        _ = book.leasesLost(inFlight: { _, worker, _ in worker != "c" })
        #expect(book.waiting == [Self.segment], "its worker gone, it waits for another")
        book.assigned(Self.segment, worker: "b", token: "u", now: 10)
        #expect(book.leasesLost(inFlight: { _, _, _ in true }, now: 700, timeout: 600).map(\.worker) == ["b"], "out too long")
        #expect(book.waiting == [Self.segment])
    }

    @Test func workersAreAuditedByWorkersAlike() {
        let one = ["threads": "1", "libx264": "164", "cpu": "1"]
        #expect(AuditBook.profile(one) == "cpu=1;libx264=164;threads=1")
        #expect(AuditBook.profile(one.merging(["threads": "2"]) { $1 }) == nil, "an earlier build's bytes with threads do not repeat")
        let repeatable = one.merging([AuditBook.repeatableCapability: "1"]) { $1 }
        #expect(AuditBook.profile(repeatable) == AuditBook.profile(one), "one thread: the same bytes from either build")
        let two = repeatable.merging(["threads": "2"]) { $1 }
        #expect(AuditBook.profile(two) == "cpu=1;libx264=164;threads=2", "two threads: audited among two-thread workers")
        #expect(AuditBook.profile(one.merging(["cpu": "3"]) { $1 }) != AuditBook.profile(one), "other CPU features, another profile")
        var book = AuditBook()
        book.opened(Self.segment, attempt: 1, profile: "p", original: Self.encode("a", [1]))
        #expect(book.pick(Self.segment, among: [Self.candidate("b", profile: "")]) == nil, "a worker with no profile audits nothing")
    }

    @Test func matchingEncodesCloseTheAudit() {
        var book = AuditBook()
        book.opened(Self.segment, attempt: 1, profile: "p", original: Self.encode("a", [1, 2]))
        book.assigned(Self.segment, worker: "b", token: "t")
        #expect(book.answered(Self.segment, with: Self.encode("b", [1, 2])) == .matched(original: Self.encode("a", [1, 2]), auditor: Self.encode("b", [1, 2])))
        #expect(!book.holds("job"))
        #expect(book.costs["job"] == .init(audited: 1, extraSeconds: 1, mismatches: 0, waived: 0))
    }

    @Test func aThirdEncodeFindsTheOddOneOut() {
        // The auditor is wrong: the original stays.
        var book = AuditBook()
        book.opened(Self.segment, attempt: 1, profile: "p", original: Self.encode("a", [1]))
        #expect(book.answered(Self.segment, with: Self.encode("b", [9])) == .disputed(original: Self.encode("a", [1]), auditor: Self.encode("b", [9])))
        #expect(book.holds("job") && book.waiting == [Self.segment])
        #expect(book.pick(Self.segment, among: [Self.candidate("a"), Self.candidate("b")]) == nil, "a third key only")
        #expect(book.answered(Self.segment, with: Self.encode("c", [1]))
                == .decided(culprit: Self.encode("b", [9]), agreeing: [Self.encode("a", [1]), Self.encode("c", [1])], originalWrong: false))
        #expect(!book.holds("job"))

        // The original is wrong: the segment is encoded again.
        var other = AuditBook()
        other.opened(Self.segment, attempt: 1, profile: "p", original: Self.encode("a", [9]))
        _ = other.answered(Self.segment, with: Self.encode("b", [1]))
        #expect(other.answered(Self.segment, with: Self.encode("c", [1]))
                == .decided(culprit: Self.encode("a", [9]), agreeing: [Self.encode("b", [1]), Self.encode("c", [1])], originalWrong: true))

        // All three differ: no one is blamed.
        var none = AuditBook()
        none.opened(Self.segment, attempt: 1, profile: "p", original: Self.encode("a", [1]))
        _ = none.answered(Self.segment, with: Self.encode("b", [2]))
        #expect(none.answered(Self.segment, with: Self.encode("c", [3])) == .undecided([Self.encode("a", [1]), Self.encode("b", [2]), Self.encode("c", [3])]))
        #expect(none.costs["job"]?.mismatches == 1)
    }

    @Test func anAuditWithNoOtherKeyConnectedIsGivenUpAfterItsWait() {
        var book = AuditBook(.init(rate: 1, wait: 5))
        book.opened(Self.segment, attempt: 1, profile: "p", original: Self.encode("a", [1]))
        #expect(book.waive(connected: [Self.candidate("a")], now: 100).isEmpty)
        #expect(book.waive(connected: [Self.candidate("a"), Self.candidate("b", free: 0)], now: 103).isEmpty, "an eligible worker, busy: it waits")
        #expect(book.waive(connected: [Self.candidate("a")], now: 107).isEmpty, "the wait starts again once none is connected")
        #expect(book.waive(connected: [Self.candidate("a")], now: 112) == [.init(segment: Self.segment, encodes: [Self.encode("a", [1])])])
        #expect(!book.holds("job") && book.costs["job"]?.waived == 1)
    }

    @Test func aCulpritsOriginalsAreEncodedAgainAndItsAuditEncodesDropped() {
        var book = AuditBook()
        let other = Ref(jobID: "job", index: 4)
        book.opened(Self.segment, attempt: 1, profile: "p", original: Self.encode("bad", [9]))
        book.opened(other, attempt: 1, profile: "p", original: Self.encode("a", [1]))
        _ = book.answered(other, with: Self.encode("bad", [9]))
        #expect(book.culpritFound("key-bad") == [Self.segment])
        #expect(book.open[other]?.encodes == [Self.encode("a", [1])] && book.waiting == [other])
        #expect(book.answered(other, with: Self.encode("c", [1])) == .matched(original: Self.encode("a", [1]), auditor: Self.encode("c", [1])))
        #expect(book.jobDropped("job")?.audited == 2 && book.open.isEmpty)
    }
}
