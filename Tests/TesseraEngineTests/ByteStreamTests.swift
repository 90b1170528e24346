import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine

/// The hand-off between the stitch writing an object and the verifier reading it: a known front, then bytes in
/// order, forward only, the writer held at its capacity and let go when the reader stops.
struct ByteStreamTests {
    func read(_ stream: ByteStream, at offset: Int64, _ count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let got = try buffer.withUnsafeMutableBytes { try stream.read(at: offset, into: $0) }
        return Array(buffer[0..<got])
    }

    @Test func theFrontThenTheStreamInOrderSkippingForward() throws {
        let stream = ByteStream(front: [1, 2, 3], size: 13)
        try [UInt8](4...13).withUnsafeBytes { try stream.append($0) }
        stream.end()
        #expect(try read(stream, at: 1, 10) == [2, 3], "the front alone")
        #expect(try read(stream, at: 3, 2) == [4, 5])
        #expect(try read(stream, at: 7, 2) == [8, 9], "a skip forward discards")
        #expect(throws: ByteStream.Failure.readBack(at: 4, streamAt: 9)) { try self.read(stream, at: 4, 1) }
        #expect(try read(stream, at: 9, 10) == [10, 11, 12, 13])
        #expect(try read(stream, at: 13, 10) == [], "the end")
    }

    struct Broken: Error {}

    @Test func theWritersFailureReachesTheReader() throws {
        let stream = ByteStream(front: [], size: 10)
        stream.end(failure: Broken())
        #expect(throws: Broken.self) { try self.read(stream, at: 0, 4) }
    }

    /// A writer at capacity waits for the reader; a reader that stops on a failure lets it go with an error, one that
    /// finished lets it drop what follows.
    @Test(arguments: [true, false]) func aWriterAtCapacityIsLetGoWhenTheReaderStops(_ failed: Bool) throws {
        let stream = ByteStream(front: [], size: 1 << 20, capacity: 4)
        try [UInt8](repeating: 1, count: 4).withUnsafeBytes { try stream.append($0) }
        let outcome = Locked<Result<Void, ByteStream.Failure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let more = [UInt8](repeating: 2, count: 4)
            let result = Result { () throws(ByteStream.Failure) in
                let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: more.count, alignment: 1)
                defer { bytes.deallocate() }
                bytes.copyBytes(from: more)
                try stream.append(UnsafeRawBufferPointer(bytes))
            }
            outcome.withValue { $0 = result }
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 0.3) == .timedOut, "the writer waits while 4 bytes wait")
        stream.close(failed: failed)
        #expect(done.wait(timeout: .now() + 5) == .success)
        switch outcome.current {
        case .failure(let failure)?: #expect(failed && failure == .readerGone)
        case .success?: #expect(!failed)
        case nil: Issue.record("no outcome")
        }
    }
}
