import Testing
@testable import TesseraCore

@Suite struct PayloadTests {
    func sampleTask() -> SegmentTask {
        let segment = PlannedSegment(index: 3, startPTS: 100, endPTS: 200, firstPacket: 10, lastPacket: 12,
                                     frameCount: 2, preRollPackets: 1, entry: .idr)
        var codec = CodecParameters(codecName: "h264")
        codec.extradata = [1, 2, 3, 0, 255]
        codec.width = 1920
        codec.height = 1080
        codec.pixelFormat = "yuv420p"
        let output = VideoOutputFormat(width: 1920, height: 1080, pixelFormat: "yuv420p", timeBase: Rational(1, 90000),
                                       frameRate: Rational(30000, 1001), sampleAspectRatio: Rational(1, 1), colorRange: 1,
                                       colorPrimaries: 1, colorTransfer: 1, colorSpace: 1, chromaLocation: 1)
        let packets = [
            MediaPacket(pts: 90, dts: nil, duration: 3003, flags: MediaPacket.keyFlag, data: [0, 0, 0, 1, 0x65]),
            MediaPacket(pts: nil, dts: -3003, duration: 0, flags: 0, data: []),
            MediaPacket(pts: Int64.max, dts: 7, duration: 1, flags: 0, data: Array(repeating: 0xAB, count: 1000)),
        ]
        return SegmentTask(jobID: "job-1", segment: segment, timeBase: Rational(1, 90000), codec: codec,
                           output: output, settings: EncoderSettings(preset: "fast", crf: 20.5, level: "4.1"), packets: packets)
    }

    @Test func taskRoundTripsExactly() throws {
        let task = sampleTask()
        let bytes = task.serialized()
        #expect(Array(bytes.prefix(4)) == Array("TSEG".utf8))
        #expect(try SegmentTask(serialized: bytes) == task)
    }

    /// A tail segment's threads reach its encode and its rungs, a worker's own count when larger; out of range refused.
    @Test func aSegmentsPlannedThreadsRaiseTheWorkersOwn() throws {
        var task = sampleTask()
        task.header.segment.encoderThreads = 2
        task.header.rungs = [.init(output: task.header.output, settings: task.header.settings)]
        let sent = try SegmentTask(serialized: task.serialized())
        #expect(sent.header.segment.encoderThreads == 2)
        var one = sent, four = sent, plain = sampleTask()
        one.setThreads(own: 1)
        four.setThreads(own: 4)
        plain.setThreads(own: 1)
        #expect(one.header.settings.threads == 2 && one.header.rungs?.first?.settings.threads == 2)
        #expect(four.header.settings.threads == 4 && four.header.rungs?.first?.settings.threads == 4)
        #expect(plain.header.settings.threads == 1)
        task.header.segment.encoderThreads = 0
        #expect(throws: PayloadError.self) { try SegmentTask(serialized: task.serialized()) }
    }

    @Test func resultRoundTripsExactly() throws {
        let result = EncodedSegment(jobID: "j", index: 2, timeBase: Rational(1, 12800), extradata: [1, 100, 0, 31],
                                    frameCount: 1, decodedFrames: 4, encodeSeconds: 0.25,
                                    packets: [MediaPacket(pts: 512, dts: -512, duration: 512, flags: 1, data: [9, 9])])
        #expect(try EncodedSegment(serialized: result.serialized()) == result)
    }

    @Test func corruptionIsDetected() {
        var bytes = sampleTask().serialized()
        bytes[bytes.count / 2] ^= 0x01
        #expect(throws: PayloadError.checksumMismatch) { _ = try SegmentTask(serialized: bytes) }
        #expect(throws: PayloadError.truncated) { _ = try SegmentTask(serialized: [UInt8](bytes.prefix(10))) }
        #expect(throws: PayloadError.wrongMagic(expected: "TRES")) { _ = try EncodedSegment(serialized: sampleTask().serialized()) }
    }

    /// The checksum is taken while the records are read, so a damaged byte can break the framing before
    /// the checksum is known; wherever it is, it is still reported as damage.
    @Test func aDamagedByteAnywhereIsReportedAsDamage() {
        let bytes = sampleTask().serialized()
        for at in 0..<(bytes.count - 8) where at >= 4 {
            var damaged = bytes
            damaged[at] ^= 0x10
            #expect(throws: PayloadError.checksumMismatch) { _ = try SegmentTask(serialized: damaged) }
        }
    }

    /// A blob that claims four billion packets (with a valid checksum, which anyone can compute) is
    /// refused before anything is allocated for them.
    @Test func hostilePacketCountIsRefused() {
        var bytes: [UInt8] = Array("TRES".utf8)
        bytes.appendLE(Blob.currentVersion)
        bytes.appendLE(UInt32(2))
        bytes += Array("{}".utf8)
        bytes.appendLE(UInt32.max)
        bytes.appendLE(PayloadChecksum.value(bytes))
        #expect(throws: PayloadError.truncated) { _ = try EncodedSegment(serialized: bytes) }
    }

    @Test func unknownVersionIsRefused() {
        var bytes = Array(sampleTask().serialized().dropLast(8))
        bytes[4] = 9
        bytes.appendLE(PayloadChecksum.value(bytes))
        #expect(throws: PayloadError.unsupportedVersion(9)) { _ = try SegmentTask(serialized: bytes) }
    }

    /// XXH64 with seed 0, against the reference implementation's outputs (`xxhsum -H1`), across the
    /// lengths that take each of its paths (under 4, under 8, under 32, stripes plus every tail).
    @Test func payloadChecksumIsXXH64() {
        #expect(PayloadChecksum.value([]) == 0xef46_db37_51d8_e999)
        #expect(PayloadChecksum.value(Array("abc".utf8)) == 0x44bc_2cf5_ad77_0999)
        let x = { (count: Int) in [UInt8](repeating: UInt8(ascii: "x"), count: count) }
        #expect(PayloadChecksum.value(x(7)) == 0x57ab_b58a_45ee_501a)
        #expect(PayloadChecksum.value(x(45)) == 0x41c3_25c1_9bf2_3e4f)
        #expect(PayloadChecksum.value(x(100_000)) == 0x7c37_a271_025b_345b)
        #expect(PayloadChecksum.value(x(100_007)) == 0xb406_39df_48bf_0712)
        #expect(PayloadChecksum.hex(0x7c37_a271_025b_345b) == "7c37a271025b345b")
    }

    /// Taken in pieces of any size as a buffer fills, the checksum is the one taken at once.
    @Test func runningChecksumMatchesTheWhole() {
        let bytes = (0..<10_007).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 5) }
        for count in [0, 3, 31, 32, 33, 64, 65, 1000, 10_007] {
            let input = Array(bytes.prefix(count))
            for step in [1, 7, 32, 45, 4096] {
                var running = PayloadChecksum.Running()
                let value = input.withUnsafeBytes { raw in
                    var end = 0
                    while end < count {
                        end = min(count, end + step)
                        running.advance(raw, to: end)
                    }
                    return running.finish(raw)
                }
                #expect(value == PayloadChecksum.value(input), "count \(count), step \(step)")
            }
        }
    }

    /// The coordinator's check of a result reads the header and the checksum without the packets,
    /// and refuses what decoding refuses.
    @Test func resultHeaderCheckMatchesDecoding() throws {
        let result = EncodedSegment(jobID: "j", index: 2, timeBase: Rational(1, 12800), extradata: [1, 100, 0, 31],
                                    frameCount: 2, decodedFrames: 4, encodeSeconds: 0.25,
                                    packets: [MediaPacket(pts: 512, dts: -512, duration: 512, flags: 1, data: [9, 9]),
                                              MediaPacket(pts: 1024, dts: 0, duration: 512, flags: 0, data: [])])
        let (bytes, checksum) = result.serializedWithChecksum()
        let checked = try EncodedSegment.checkedHeader(bytes)
        #expect(checked.header == result.header)
        #expect(PayloadChecksum.hex(checked.checksum) == checksum)
        #expect(checksum == PayloadChecksum.hex(PayloadChecksum.value(Array(bytes.dropLast(8)))))
        var damaged = bytes
        damaged[damaged.count - 12] ^= 0x40
        #expect(throws: PayloadError.checksumMismatch) { _ = try EncodedSegment.checkedHeader(damaged) }
        // One packet short of the frame count, with a valid checksum: refused by both.
        let short = EncodedSegment(jobID: "j", index: 2, timeBase: Rational(1, 12800), extradata: [], frameCount: 2,
                                   decodedFrames: 2, encodeSeconds: 0, packets: [result.packets[0]])
        #expect(throws: PayloadError.self) { _ = try EncodedSegment.checkedHeader(short.serialized()) }
        #expect(throws: PayloadError.self) { _ = try EncodedSegment(serialized: short.serialized()) }
    }

    /// SPS/PPS bytes travel as one hex string; the array form (stored before) still reads.
    @Test func headerBytesTravelAsHex() throws {
        var codec = CodecParameters(codecName: "h264")
        codec.extradata = [0x01, 0x64, 0x00, 0x1f, 0xff]
        let json = String(decoding: CanonicalJSON.data(codec), as: UTF8.self)
        #expect(json.contains("\"extradata\":\"0164001fff\""))
        #expect(try CanonicalJSON.decode(CodecParameters.self, from: Array(json.utf8)) == codec)
        let legacy = json.replacingOccurrences(of: "\"0164001fff\"", with: "[1,100,0,31,255]")
        #expect(try CanonicalJSON.decode(CodecParameters.self, from: Array(legacy.utf8)).extradata == codec.extradata)
        #expect([UInt8](hex: "0A0b") == [10, 11])
        #expect([UInt8](hex: "abc") == nil)
        #expect([UInt8](hex: "zz") == nil)
    }

    @Test func settingsDigestIsStableAndDistinguishes() {
        let a = EncoderSettings(crf: 20), b = EncoderSettings(crf: 21)
        #expect(a.digest == EncoderSettings(crf: 20).digest)
        #expect(a.digest != b.digest)
    }
}

@Suite struct BlobStreamingTests {
    /// Packets put one at a time give the same bytes as the array form; a count or size that differs
    /// from the one announced gives nothing.
    @Test func packetsPutOneByOneMatchTheArrayForm() throws {
        let task = PayloadTests().sampleTask()
        let header = CanonicalJSON.data(task.header)
        let dataBytes = task.packets.reduce(0) { $0 + $1.data.count }
        func streamed(_ packets: [MediaPacket], announced: Int, bytes: Int) -> [UInt8]? {
            Blob.encode(magic: SegmentTask.magic, header: header, packets: announced, dataBytes: bytes) { put in
                for p in packets { p.data.withUnsafeBytes { put(p.pts, p.dts, p.duration, p.flags, $0) } }
                return true
            }
        }
        #expect(streamed(task.packets, announced: task.packets.count, bytes: dataBytes) == task.serialized())
        #expect(streamed(task.packets, announced: task.packets.count + 1, bytes: dataBytes) == nil)
        #expect(streamed(task.packets, announced: task.packets.count, bytes: dataBytes - 1) == nil)
        #expect(streamed(task.packets, announced: task.packets.count, bytes: dataBytes + 1) == nil)
        let refused = Blob.encode(magic: SegmentTask.magic, header: header, packets: 0, dataBytes: 0, fill: { _ in false })
        #expect(refused == nil)
    }

    /// Records written in place (a file read straight into the blob) give the same bytes; a write that
    /// fails gives nothing.
    @Test func packetsWrittenInPlaceMatchTheArrayForm() throws {
        let task = PayloadTests().sampleTask()
        let header = CanonicalJSON.data(task.header)
        let dataBytes = task.packets.reduce(0) { $0 + $1.data.count }
        func inPlace(failing: Int? = nil) -> [UInt8]? {
            Blob.encode(magic: SegmentTask.magic, header: header, packets: task.packets.count, dataBytes: dataBytes) { put in
                for (n, p) in task.packets.enumerated() {
                    put(p.pts, p.dts, p.duration, p.flags, p.data.count) { place in
                        p.data.withUnsafeBytes { place.copyMemory(from: $0) }
                        return n != failing
                    }
                }
                return true
            }
        }
        #expect(inPlace() == task.serialized())
        #expect(try SegmentTask(serialized: try #require(inPlace())) == task)
        #expect(inPlace(failing: 2) == nil)
    }
}
