import Foundation
import Testing
@testable import TesseraEngine

/// A job's results appended to one spool file: each is read back from its offset, a coordinator that
/// opens the file again appends after what is there, and a short or missing file reads as nothing.
@Suite struct SpoolLogTests {
    @Test func resultsAreReadBackFromTheirOffsets() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoollog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("segments.tres").path

        let first = (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
        let second = [UInt8](repeating: 0xAB, count: 3)
        let log = try SpoolLog(path: path)
        #expect(try log.append(first) == 0)
        #expect(try log.append(second) == Int64(first.count))
        #expect(log.size == Int64(first.count + second.count))

        // A restarted coordinator opens it again and appends after both.
        let reopened = try SpoolLog(path: path)
        let third: [UInt8] = [1, 2, 3, 4, 5]
        #expect(try reopened.append(third) == Int64(first.count + second.count))

        #expect(SpoolLog.read(path, offset: 0, count: first.count) == first)
        #expect(SpoolLog.read(path, offset: Int64(first.count), count: second.count) == second)
        #expect(SpoolLog.read(path, offset: Int64(first.count + second.count), count: third.count) == third)
        #expect(SpoolLog.read(path, offset: Int64(first.count + second.count), count: third.count + 1) == nil, "past the end")
        #expect(SpoolLog.read(directory.appendingPathComponent("missing").path, offset: 0, count: 1) == nil)
        #expect(SpoolLog.read(path, offset: -1, count: 1) == nil)
    }
}
