import Testing
import TesseraCore
@testable import TesseraEngine

/// Where the streamed stitch writes: the front kept and rewritable, the media sent on once, in order, in parts.
struct StreamedUploadSinkTests {
    func write(_ sink: StreamedUploadSink, at offset: Int64, _ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try sink.write(at: offset, $0) }
    }

    @Test func theFrontIsRewrittenAndTheMediaGoesOnInParts() throws {
        let stream = ByteStream(front: [UInt8](repeating: 0, count: 4), size: 24)
        let sink = StreamedUploadSink(mediaStart: 4, firstPartSize: 8, partSize: 6, upload: nil, stream: stream)
        // A header with a hole for the index, then media across part 1 and two later parts.
        try write(sink, at: 0, [1])
        try write(sink, at: 3, [9, 10, 11, 12])
        try write(sink, at: 7, Array(13...26))
        // The trailer fills in the front.
        try write(sink, at: 1, [2, 3])
        #expect(throws: StreamedUploadSink.Failure.rewrite(at: 5)) { try self.write(sink, at: 5, [0]) }
        try sink.finish()
        stream.end()
        #expect(sink.firstPart == [1, 2, 3, 9, 10, 11, 12, 13])
        let media = [UInt8](10...26)
        func digest(_ bytes: ArraySlice<UInt8>) -> UInt64 { bytes.withUnsafeBytes { PayloadChecksum.value($0) } }
        #expect(sink.digests == [digest(media[0..<4]), digest(media[4..<10]), digest(media[10..<16]), digest(media[16...])])
        var read = [UInt8](repeating: 0, count: 32)
        let got = try read.withUnsafeMutableBytes { try stream.read(at: 4, into: $0) }
        #expect(got > 0 && Array(read[0..<got]) == Array(media.prefix(got)), "the verifier's stream gets the media from its start")
    }
}
