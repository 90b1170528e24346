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

    /// A Matroska block's header: the track number's length and value, and laced blocks refused.
    @Test func matroskaBlockHeadersAreRead() {
        #expect(MatroskaBlockHeader([0x81, 0x00, 0x00, 0x80, 0x00]) == MatroskaBlockHeader(track: 1, length: 4))
        #expect(MatroskaBlockHeader([0x40, 0x85, 0x12, 0x34, 0x00]) == MatroskaBlockHeader(track: 133, length: 5))
        #expect(MatroskaBlockHeader([0x81, 0x00, 0x00, 0x82]) == nil, "Xiph lacing")
        #expect(MatroskaBlockHeader([0x81, 0x00, 0x00, 0x86]) == nil, "EBML lacing")
        #expect(MatroskaBlockHeader([0x81, 0x00, 0x00]) == nil, "cut short")
        #expect(MatroskaBlockHeader([0x00, 0x81, 0x00, 0x00, 0x80]) == nil, "no length marker in the first byte")
    }

    /// With a block header, each GET starts at the block's element (its ID and size), which is checked with the
    /// header: another track's header, a laced block, or a block that does not end where the packet ends fails the read.
    @Test func matroskaPacketsAreCutAfterTheirCheckedBlocks() throws {
        var file = [UInt8](repeating: 0xEE, count: 80)
        file.replaceSubrange(10..<19, with: [0xA3, 0x87, 0x81, 0x00, 0x00, 0x80, 1, 2, 3])  // SimpleBlock, 7 bytes
        file.replaceSubrange(29..<38, with: [0xA1, 0x40, 0x06, 0x81, 0x00, 0x28, 0x00, 4, 5])  // Block, 6 bytes in a 2-byte size
        let header = MatroskaBlockHeader(track: 1, length: 4)
        var source = Self.ranges([16, 36], [3, 2])
        source.blockHeader = header
        #expect(source.spans == [3..<38])
        let read = { (s: SourceRanges) in s.packetBytes { (span: Range<Int64>) in Array(file[Int(span.lowerBound)..<Int(span.upperBound)]) } }
        #expect(read(source) == [[1, 2, 3], [4, 5]])
        for (offset, byte, what) in [(32, 0x82, "another track"), (35, 0x02, "laced"), (31, 0x07, "a block longer than the packet"),
                                     (29, 0xA2, "not a block")] as [(Int, UInt8, String)] {
            let kept = file[offset]
            file[offset] = byte
            #expect(read(source) == nil, "\(what)")
            file[offset] = kept
        }
        #expect(read(source) == [[1, 2, 3], [4, 5]])
        var task = PayloadTests().sampleTask()
        task.packets = task.packets.map { var p = $0; p.data = []; return p }
        task.header.source = Self.ranges([13, 20, 30], [1, 1, 1])
        task.header.source?.blockHeader = header
        #expect(try SegmentTask(serialized: task.serialized()) == task)
        task.header.source?.positions[0] = 12
        #expect(throws: PayloadError.self, "a position before its block's element and header") { try SegmentTask(serialized: task.serialized()) }
    }

    /// An AVI chunk's header: a video chunk's code and the packet's length, little-endian; another stream's chunk,
    /// an audio chunk or another length fails the read.
    @Test func aviPacketsAreCutAfterTheirCheckedChunks() {
        var file = [UInt8](repeating: 0xEE, count: 40)
        file.replaceSubrange(4..<15, with: Array("00dc".utf8) + [3, 0, 0, 0, 1, 2, 3])
        file.replaceSubrange(20..<30, with: Array("00db".utf8) + [2, 0, 0, 0, 4, 5])
        #expect(AVIChunkHeader(Array("01wb".utf8) + [0, 0, 0, 0]) == nil, "audio")
        var source = Self.ranges([12, 28], [3, 2])
        source.chunkHeader = AVIChunkHeader(file[4..<12])
        #expect(source.chunkHeader == AVIChunkHeader(stream: "00") && source.versionNeeded == 2)
        let read = { (s: SourceRanges) in s.packetBytes { (span: Range<Int64>) in Array(file[Int(span.lowerBound)..<Int(span.upperBound)]) } }
        #expect(read(source) == [[1, 2, 3], [4, 5]])
        for (offset, byte, what) in [(21, 0x31, "another stream"), (24, 3, "another length"), (23, 0x77, "not video")] as [(Int, UInt8, String)] {
            let kept = file[offset]
            file[offset] = byte
            #expect(read(source) == nil, "\(what)")
            file[offset] = kept
        }
    }

    /// Ranges ending near the largest offset merge without overflow.
    @Test func spansNearTheLargestOffsetDoNotOverflow() {
        let source = Self.ranges([Int64.max - 10, Int64.max - 4], [4, 3])
        #expect(source.spans == [(Int64.max - 10)..<(Int64.max - 1)])
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

    /// A worker's version: "1" under the capability, the version beside it (absent: 1); anything else reads none.
    @Test func workersAnnounceTheVersionTheyRead() {
        #expect(SourceRanges.version(in: [:]) == 0)
        #expect(SourceRanges.version(in: ["source-ranges": "1"]) == 1)
        #expect(SourceRanges.version(in: ["source-ranges": "1", "source-ranges-version": "2"]) == 2)
        #expect(SourceRanges.version(in: ["source-ranges": "2"]) == 0)
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
