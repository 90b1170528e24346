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

    /// A blob that claims four billion packets (with a valid checksum, which anyone can compute) is
    /// refused before anything is allocated for them.
    @Test func hostilePacketCountIsRefused() {
        var bytes: [UInt8] = Array("TRES".utf8)
        bytes.appendLE(Blob.currentVersion)
        bytes.appendLE(UInt32(2))
        bytes += Array("{}".utf8)
        bytes.appendLE(UInt32.max)
        var hasher = FNV1a64()
        hasher.update(bytes)
        bytes.appendLE(hasher.value)
        #expect(throws: PayloadError.truncated) { _ = try EncodedSegment(serialized: bytes) }
    }

    @Test func unknownVersionIsRefused() {
        var bytes = Array(sampleTask().serialized().dropLast(8))
        bytes[4] = 9
        var hasher = FNV1a64()
        hasher.update(bytes)
        bytes.appendLE(hasher.value)
        #expect(throws: PayloadError.unsupportedVersion(9)) { _ = try SegmentTask(serialized: bytes) }
    }

    @Test func settingsDigestIsStableAndDistinguishes() {
        let a = EncoderSettings(crf: 20), b = EncoderSettings(crf: 21)
        #expect(a.digest == EncoderSettings(crf: 20).digest)
        #expect(a.digest != b.digest)
    }
}
