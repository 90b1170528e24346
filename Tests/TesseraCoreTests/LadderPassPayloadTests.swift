import Testing
@testable import TesseraCore

/// A two-pass ladder's task carries a pass per rung, and its first pass's result the statistics of each rung.
@Suite struct LadderPassPayloadTests {
    func ladderTask(_ passes: [PassInput?], header: PassInput?) -> SegmentTask {
        var task = PayloadTests().sampleTask()
        let first = SegmentTask.RungEncoding(output: task.header.output, settings: task.header.settings)
        var small = task.header.output
        small.width = 640
        small.height = 360
        let outputs = [first.output, small]
        task.header.rungs = zip(outputs, passes).map { .init(output: $0, settings: task.header.settings, pass: $1) }
        task.header.pass = header
        return task
    }

    @Test func aTaskCarriesEachRungsPass() throws {
        let high = PassInput(pass: 2, bitrate: 3_000_000, stats: "#options: 1920x1080", macroblockTree: [1])
        let low = PassInput(pass: 2, bitrate: 800_000, stats: "#options: 640x360", macroblockTree: [2])
        let task = ladderTask([high, low], header: high)
        let read = try SegmentTask(serialized: task.serialized())
        #expect(read == task && read.header.rungs?.map(\.pass) == [high, low])
        // Rungs in different passes, a rung without its pass, a first rung that is not the header's: refused.
        for bad in [ladderTask([high, PassInput(pass: 1)], header: high), ladderTask([high, nil], header: high),
                    ladderTask([low, high], header: high), ladderTask([high, PassInput(pass: 2)], header: high),
                    ladderTask([high, low], header: nil)] {
            #expect(throws: PayloadError.self) { _ = try SegmentTask(serialized: bad.serialized()) }
        }
        #expect(try SegmentTask(serialized: ladderTask([nil, nil], header: nil).serialized()).header.rungs?.count == 2, "one pass")
    }

    @Test func aFirstPassResultCarriesEachRungsStatistics() throws {
        let stats = [FirstPassOutput(stats: "#options: 1920x1080", macroblockTree: [1, 2]),
                     FirstPassOutput(stats: "#options: 640x360", macroblockTree: [3])]
        let headers: [[UInt8]] = [[1, 100], [1, 77]]
        func result(_ rungs: [FirstPassOutput?], header: FirstPassOutput?) -> EncodedSegment {
            EncodedSegment(jobID: "j", index: 1, timeBase: Rational(1, 12800), extradata: EncodedSegment.RungHeaders.combined(headers),
                           frameCount: 3, decodedFrames: 3, encodeSeconds: 0.5, firstPass: header,
                           rungs: zip(headers, rungs).map { .init(extradata: $0, firstPass: $1) }, packets: [])
        }
        let good = result(stats, header: stats[0])
        let read = try EncodedSegment(serialized: good.serialized())
        #expect(read == good)
        #expect(read.rung(0).header.firstPass == stats[0] && read.rung(1).header.firstPass == stats[1])
        #expect(read.rung(1).packets.isEmpty && read.rung(1).header.extradata == headers[1])
        for bad in [result([stats[0], nil], header: stats[0]), result(stats, header: nil), result([stats[1], stats[0]], header: stats[0])] {
            #expect(throws: PayloadError.self) { _ = try EncodedSegment(serialized: bad.serialized()) }
        }
    }
}
