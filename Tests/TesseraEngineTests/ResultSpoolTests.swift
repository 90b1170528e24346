import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

/// A job's results appended to one spool file: each is read back from its offset, a coordinator that
/// opens the file again appends after what is there, and a short or missing file reads as nothing.
@Suite struct ResultSpoolTests {
    @Test func resultsAreReadBackFromTheirOffsets() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoollog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("segments.tres").path

        let first = (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
        let second = [UInt8](repeating: 0xAB, count: 3)
        let log = try ResultSpool(directory: directory)
        #expect(log.path == path)
        #expect(try log.append(first) == 0)
        #expect(try log.append(second) == Int64(first.count))
        #expect(log.size == Int64(first.count + second.count))

        // A restarted coordinator opens it again and appends after both.
        let reopened = try ResultSpool(directory: directory)
        let third: [UInt8] = [1, 2, 3, 4, 5]
        #expect(try reopened.append(third) == Int64(first.count + second.count))

        #expect(ResultSpool.read(path, offset: 0, count: first.count) == first)
        #expect(ResultSpool.read(path, offset: Int64(first.count), count: second.count) == second)
        #expect(ResultSpool.read(path, offset: Int64(first.count + second.count), count: third.count) == third)
        #expect(ResultSpool.read(path, offset: Int64(first.count + second.count), count: third.count + 1) == nil, "past the end")
        #expect(ResultSpool.read(directory.appendingPathComponent("missing").path, offset: 0, count: 1) == nil)
        #expect(ResultSpool.read(path, offset: -1, count: 1) == nil)
    }

    /// A recorded result loads only when it is there, carries the recorded checksum and is intact; what
    /// is wrong is a stitch error naming the segment. Removing the spool removes its directory.
    @Test func recordedResultsLoadOnlyWhenIntact() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("spool-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let spool = try ResultSpool(root: root, job: "job")
        let result = EncodedSegment(jobID: "job", index: 4, timeBase: Rational(1, 12800), extradata: [1, 100, 0, 31],
                                    frameCount: 1, decodedFrames: 1, encodeSeconds: 0.5,
                                    packets: [MediaPacket(pts: 512, dts: 0, duration: 512, flags: 1, data: [7, 7, 7])])
        _ = try spool.append([0xEE])
        let entry = try spool.append(result)
        #expect(entry == ResultSpool.Entry(path: spool.path, offset: 1, size: result.serialized().count,
                                           checksum: result.serializedWithChecksum().checksum))
        #expect(ResultSpool.intact(entry))
        #expect(try ResultSpool.load(entry, segment: 4) == result)

        var other = entry
        other.checksum = "0000000000000000"
        #expect(!ResultSpool.intact(other), "not the result recorded")
        other = entry
        other.size += 1
        #expect(!ResultSpool.intact(other), "past the end")
        do {
            _ = try ResultSpool.load(nil, segment: 4)
            Issue.record("loaded a result never recorded")
        } catch {
            #expect(error.kind == .stitch && error.segment == 4)
        }

        // A damaged byte in the packets: the trailer still matches the record, the bytes do not.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: spool.path))
        try handle.seek(toOffset: UInt64(entry.offset) + UInt64(entry.size - 10))
        try handle.write(contentsOf: [0x00])
        try handle.close()
        #expect(!ResultSpool.intact(entry))
        #expect(throws: TesseraError.self) { _ = try ResultSpool.load(entry, segment: 4) }

        spool.remove()
        #expect(!FileManager.default.fileExists(atPath: ResultSpool.directory(of: "job", in: root).path))
    }
}
