import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

/// A ladder task: one decode, every rung encoded, each rung frame-exact with IDRs at every packaging cut.
@Suite(.serialized) struct LadderEncodeTests {
    static func ladderOptions(_ heights: String, seconds: Double = 1, fps: String? = nil) throws -> JobOptions {
        var options = JobOptions(settings: EncoderSettings(preset: "veryfast"), workers: 2)
        options.ladder = LadderSpec(ladder: try Ladder(parsing: heights), packaging: .hls, segmentSeconds: seconds)
        if let fps { options.picture.fps = Rational(frameRate: fps) }
        return options
    }

    @Test(arguments: [SourceKind.closedGOPWithBFrames, .openGOP, .variableFrameRate])
    func everyRungHoldsEveryFrameWithIDRsAtTheCuts(kind: SourceKind) throws {
        let plan = try JobPlanner.plan(try MediaProbe.probe(try kind.make()), options: Self.ladderOptions("480,240,144"))
        let ladder = try #require(plan.ladder)
        #expect(ladder.names == ["240p", "144p"], "480 is above the source and dropped")
        #expect(ladder.resolved.notice?.contains("480") == true)
        #expect(ladder.rungs.map(\.output.height) == [240, 144])
        let cuts = plan.packagingCutTicks
        #expect(cuts.count >= 4, "a 6 s source cut every second")
        // Every segment starts on a packaging cut.
        for segment in plan.cuts.segments.dropFirst() {
            #expect(cuts.contains(plan.output.outputTicks(start: segment.startPTS, end: segment.endPTS, sourceTimeBase: plan.cuts.timeBase).lowerBound))
        }
        let reader = try SegmentReader(plan: plan)
        var idrs: [[Int64]] = Array(repeating: [], count: ladder.rungs.count)
        var frames = Array(repeating: 0, count: ladder.rungs.count)
        for segment in plan.cuts.segments {
            let encoded = try SegmentEncoder.encode(try reader.task(for: segment))
            #expect(encoded.rungCount == 2)
            #expect(encoded.header.extradata == EncodedSegment.RungHeaders.combined((0..<2).map { encoded.rung($0).header.extradata }))
            for r in 0..<ladder.rungs.count {
                let rung = encoded.rung(r)
                #expect(rung.packets.count == plan.outputFrames(segment.index))
                frames[r] += rung.packets.count
                let classifier = RandomAccessClassifier(codecName: "h264", intraOnly: false, extradata: rung.header.extradata)
                for p in rung.packets where p.data.withUnsafeBytes({ classifier.classify($0, keyFlag: p.isKey) }) == .idr {
                    idrs[r].append(p.pts!)
                }
            }
            // The rungs show the same instants.
            #expect(encoded.rung(0).packets.compactMap(\.pts).sorted() == encoded.rung(1).packets.compactMap(\.pts).sorted())
        }
        #expect(frames.allSatisfy { $0 == plan.outputFrameCount })
        for r in idrs.indices {
            #expect(Set(cuts).isSubset(of: Set(idrs[r])), "rung \(r) has an IDR at every packaging cut")
        }
    }

    @Test func aResampledLadderCutsOnOutputTicks() throws {
        let plan = try JobPlanner.plan(try MediaProbe.probe(try SourceKind.closedGOPWithBFrames.make()),
                                       options: Self.ladderOptions("240,144", seconds: 2, fps: "30"))
        let reader = try SegmentReader(plan: plan)
        var total = 0
        for segment in plan.cuts.segments {
            let encoded = try SegmentEncoder.encode(try reader.task(for: segment))
            for r in 0..<2 {
                let rung = encoded.rung(r)
                #expect(rung.packets.count == plan.outputFrames(segment.index))
                let classifier = RandomAccessClassifier(codecName: "h264", intraOnly: false, extradata: rung.header.extradata)
                let idrs = Set(rung.packets.filter { p in p.data.withUnsafeBytes { classifier.classify($0, keyFlag: p.isKey) } == .idr }.map { $0.pts! })
                let span = plan.output.outputTicks(start: segment.startPTS, end: segment.endPTS, sourceTimeBase: plan.cuts.timeBase)
                #expect(plan.packagingCutTicks.filter(span.contains).allSatisfy(idrs.contains))
            }
            total += encoded.rung(0).packets.count
        }
        #expect(total == plan.outputFrameCount)
    }

    @Test func aRungBeyondThePinnedLevelIsRefusedAtPlanning() throws {
        var options = try Self.ladderOptions("240")
        options.settings.level = "1"
        options.ladder?.ladder = try Ladder(parsing: "240:5M")
        #expect(throws: TesseraError.self) {
            try JobPlanner.plan(try MediaProbe.probe(try SourceKind.closedGOPWithBFrames.make()), options: options)
        }
    }
}
