import CTesseraShim
import FFmpegKit
import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

/// What an audit relies on: a segment's encode gives the same bytes on any honest worker. Varied here as they
/// vary between hosts: slots (encodes beside each other), SIMD (off against on, libavcodec's and libx264's), and
/// libx264's threads. With more than one thread libx264 did not repeat its bytes here (2 threads: one segment of six
/// differed between two encodes in the same process), so only workers with `--threads 1` are audited
/// (`AuditBook.profile`). The heap's state is `DeterminismTests`'.
@Suite(.serialized) struct AuditDeterminismTests {
    static func tasks() throws -> [SegmentTask] {
        let plan = try JobPlanner.plan(try MediaProbe.probe(try SourceKind.openGOP.make()), options: quickOptions())
        var tasks: [SegmentTask] = []
        try SegmentSource(plan: plan).forEachTask { tasks.append($0) }
        return tasks
    }

    static func encode(_ tasks: [SegmentTask], threads: Int = 1) throws -> [[MediaPacket]] {
        try tasks.map { task in
            var task = task
            task.header.settings.threads = threads
            return try SegmentEncoder.encode(task).packets
        }
    }

    @Test func encodesBesideOthersGiveTheSameBytes() throws {
        let tasks = try Self.tasks()
        let alone = try Self.encode(tasks)
        // Every segment at once, each on a thread of its own, as a worker with that many slots runs them.
        let results = Locked<[Int: [MediaPacket]]>([:])
        DispatchQueue.concurrentPerform(iterations: tasks.count) { n in
            let packets = try? SegmentEncoder.encode(tasks[n]).packets
            results.withValue { $0[n] = packets }
        }
        #expect((0..<tasks.count).map { results.current[$0] ?? [] } == alone)
    }

    /// libavcodec's and libswscale's SIMD are exact: off, the decode and the picture path give the same frames,
    /// and the encode the same bytes.
    @Test func libavcodecsSimdOffGivesTheSameBytes() throws {
        let tasks = try Self.tasks()
        let on = try Self.encode(tasks)
        tessera_force_cpu_flags(0)
        defer { tessera_force_cpu_flags(-1) }
        let off = try Self.encode(tasks)
        #expect(off.count == on.count && zip(off, on).allSatisfy { $0 == $1 }, "segments that differ: \(zip(off, on).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset))")
    }

    /// libx264's assembly is not: off, it gives other bytes than on (every segment here), so another CPU feature
    /// set may too. Audits compare only workers with the same CPU features (`FFmpeg.cpuFlags`, in the encoder
    /// profile `AuditBook` matches).
    @Test func libx264sAsmOffGivesOtherBytes() throws {
        let tasks = try Self.tasks()
        let on = try Self.encode(tasks)
        FFmpeg.simd = false
        defer { FFmpeg.simd = true }
        let off = try Self.encode(tasks)
        let differing = zip(off, on).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
        print("libx264 asm off against on: \(differing.count) of \(on.count) segments differ")
        #expect(!differing.isEmpty)
    }

    @Test func oneThreadGivesTheSameBytesEachTime() throws {
        let tasks = try Self.tasks()
        let first = try Self.encode(tasks)
        for round in 0..<3 {
            let again = try Self.encode(tasks)
            #expect(again == first, "round \(round): segments \(zip(first, again).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)) differ")
        }
    }
}
