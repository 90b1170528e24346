import Testing
@testable import TesseraCore

@Suite struct SourceRangesTests {
    static func ranges(_ positions: [Int64], _ sizes: [Int]) -> SourceRanges {
        SourceRanges(url: "http://s3/b/k?X-Amz-Signature=00", object: "s3://b/k", etag: "\"e\"", positions: positions, sizes: sizes)
    }

    /// Packets close together (audio between them) are one GET; a gap over `largestGap` starts another.
    @Test func nearbyPacketsShareOneGet() {
        let far = 1000 + SourceRanges.largestGap + 1
        let source = Self.ranges([500, 100, 300, far], [100, 50, 100, 10])
        #expect(source.spans == [100..<600, far..<(far + 10)])
    }

    /// Each packet is cut from its span, in the payload's order (decode order, not file order).
    @Test func packetsAreCutFromTheirSpans() throws {
        let source = Self.ranges([40, 10, 3_000_000], [5, 3, 2])
        var asked: [Range<Int64>] = []
        let bytes = source.packetBytes { (span: Range<Int64>) in
            asked.append(span)
            return span.map { UInt8(truncatingIfNeeded: $0) }
        }
        #expect(asked == [10..<45, 3_000_000..<3_000_002])
        #expect(bytes == [[40, 41, 42, 43, 44], [10, 11, 12], [UInt8(truncatingIfNeeded: 3_000_000), UInt8(truncatingIfNeeded: 3_000_001)]])
        #expect(source.packetBytes { (span: Range<Int64>) in [UInt8](repeating: 0, count: span.count - 1) } == nil, "a short answer")
    }

    /// A task with source ranges round-trips with empty records; one whose ranges do not match its packets is refused.
    @Test func aTaskWithRangesRoundTripsAndIsChecked() throws {
        var task = PayloadTests().sampleTask()
        task.packets = task.packets.map { var p = $0; p.data = []; return p }
        task.header.source = Self.ranges([0, 5, 9], [5, 4, 1])
        #expect(try SegmentTask(serialized: task.serialized()) == task)
        for bad in [Self.ranges([0, 5], [5, 4]), Self.ranges([0, 5, -1], [5, 4, 1]), Self.ranges([0, 5, Int64.max], [5, 4, 1]),
                    Self.ranges([0, 5, 9], [5, 0, 1])] {
            var wrong = task
            wrong.header.source = bad
            #expect(throws: PayloadError.self) { try SegmentTask(serialized: wrong.serialized()) }
        }
        var carrying = task
        carrying.packets[0].data = [1]
        #expect(throws: PayloadError.self) { try SegmentTask(serialized: carrying.serialized()) }
    }

    /// Four leases, at least an hour, at most seven days.
    @Test func urlsOutliveTheLease() {
        #expect(SourceRanges.urlLifetime(leaseSeconds: 600) == 3600)
        #expect(SourceRanges.urlLifetime(leaseSeconds: 1800) == 7200)
        #expect(SourceRanges.urlLifetime(leaseSeconds: 1e9) == 604_800)
    }

    /// A failure's code travels as a string; one this release does not know still decodes.
    @Test func failureCodesRoundTrip() throws {
        let failure = ClusterMessage.Failure(segment: .init(jobID: "j", index: 1), attempt: 1, token: "t", error: "e", code: .sourceUnreadable)
        let json = CanonicalJSON.data(failure)
        #expect(String(decoding: json, as: UTF8.self).contains("\"code\":\"source_unreadable\""))
        #expect(try CanonicalJSON.decode(ClusterMessage.Failure.self, from: json) == failure)
        let newer = Array(String(decoding: json, as: UTF8.self).replacingOccurrences(of: "source_unreadable", with: "later").utf8)
        #expect(try CanonicalJSON.decode(ClusterMessage.Failure.self, from: newer).code?.rawValue == "later")
    }
}
