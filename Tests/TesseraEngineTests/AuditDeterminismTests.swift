import CTesseraShim
import FFmpegKit
import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

/// What an audit relies on: a segment's encode gives the same bytes on any honest worker. Varied here as they
/// vary between hosts: slots (encodes beside each other), SIMD (off against on, libavcodec's and libx264's), and
/// libx264's threads. With more than one thread libx264's lookahead thread made a segment's last frame types differ
/// between encodes (2 threads: one segment of six, in half the repeats), so an audited job's tasks ask for the
/// lookahead in the encoding thread (`SegmentTask.Header.repeatable`). The heap's state is `DeterminismTests`'.
@Suite(.serialized) struct AuditDeterminismTests {
    static func tasks() throws -> [SegmentTask] {
        let plan = try JobPlanner.plan(try MediaProbe.probe(try SourceKind.openGOP.make()), options: quickOptions())
        var tasks: [SegmentTask] = []
        try SegmentSource(plan: plan).forEachTask { tasks.append($0) }
        return tasks
    }

    static func encode(_ tasks: [SegmentTask], threads: Int = 1, repeatable: Bool? = nil) throws -> [[MediaPacket]] {
        try tasks.map { task in
            var task = task
            task.header.settings.threads = threads
            task.header.repeatable = repeatable
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
        #expect(zip(off, on).contains { $0 != $1 }, "libx264's assembly off gave the same bytes in all \(on.count) segments")
    }

    /// Two threads, the task asking for repeatable bytes: five repeats alike (without it, half differed).
    @Test func twoThreadsGiveTheSameBytesEachTimeWhenTheTaskAsks() throws {
        let tasks = try Self.tasks()
        let first = try Self.encode(tasks, threads: 2, repeatable: true)
        for round in 0..<5 {
            let again = try Self.encode(tasks, threads: 2, repeatable: true)
            let differing = zip(first, again).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
            #expect(differing.isEmpty && again.count == first.count, "round \(round): segments \(differing) differ")
        }
    }

    /// HEVC and AV1, with one encoder thread and with two, as an audited job's tasks ask: two encodes alike.
    @Test(arguments: [VideoCodec.hevc, .av1], [1, 2])
    func otherCodecsGiveTheSameBytesEachTime(codec: VideoCodec, threads: Int) throws {
        let plan = try JobPlanner.plan(try MediaProbe.probe(try SourceKind.openGOP.make()), options: CodecTests.options(codec))
        var tasks: [SegmentTask] = []
        try SegmentSource(plan: plan).forEachTask { tasks.append($0) }
        let first = try Self.encode(tasks, threads: threads, repeatable: true)
        let again = try Self.encode(tasks, threads: threads, repeatable: true)
        let differing = zip(first, again).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
        #expect(differing.isEmpty && again.count == first.count && !first.isEmpty, "\(codec), \(threads) thread(s): segments \(differing) differ")
    }

    /// x265's pool and SVT-AV1's logical processors take the host's cores (`SegmentEncoder.poolThreads`), so a
    /// segment's bytes must not depend on their number: `--threads 1` (the host's cores) against 5.
    @Test(arguments: [VideoCodec.hevc, .av1])
    func otherCodecsGiveTheSameBytesWithAnyPool(codec: VideoCodec) throws {
        let plan = try JobPlanner.plan(try MediaProbe.probe(try SourceKind.openGOP.make()), options: CodecTests.options(codec))
        var tasks: [SegmentTask] = []
        try SegmentSource(plan: plan).forEachTask { tasks.append($0) }
        var few = tasks[0].header.settings
        few.threads = 1
        #expect(SegmentEncoder.poolThreads(few) != 5)
        let small = try Self.encode(tasks, threads: 1)
        let large = try Self.encode(tasks, threads: 5)
        let differing = zip(small, large).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
        #expect(differing.isEmpty && large.count == small.count && !small.isEmpty, "\(codec): segments \(differing) differ")
    }

    @Test func oneThreadGivesTheSameBytesEachTime() throws {
        let tasks = try Self.tasks()
        let first = try Self.encode(tasks)
        for round in 0..<3 {
            let again = try Self.encode(tasks)
            let differing = zip(first, again).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
            #expect(differing.isEmpty && again.count == first.count, "round \(round): segments \(differing) differ")
        }
    }
}
