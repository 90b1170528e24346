import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

/// A segment that starts where the whole-file encode puts no IDR (an extra cut) makes no IDR of its own:
/// libx264 alone weighs a scene cut by the frames since the segment's first IDR, not since the whole file's
/// last one, and in noisy content makes IDRs the whole-file encode does not.
@Suite(.serialized) struct ExtraCutTests {
    @Test func aSegmentAtAnExtraCutMakesNoIDRTheWholeFileDoesNot() throws {
        // 4 s clean, then 4 s noisy: one forecast GOP, cut evenly in two, the second piece at an extra cut.
        let source = try Fixtures.cleanThenNoisy()
        let options = JobOptions(settings: EncoderSettings(preset: "veryfast"), segmentSeconds: nil, workers: 2)
        // Found to be grain, the clip gets no extra cut (see below); told otherwise, it gets one.
        var probe = try JobPlanner.plan(try MediaProbe.probe(source), options: options).probe
        probe.decodedScenes?.grain = false
        let plan = try JobPlanner.plan(probe, options: options)
        try #require(plan.cuts.segments.count == 2, "\(plan.cuts.segments.map(\.frameCount))")
        let (first, second) = (plan.cuts.segments[0], plan.cuts.segments[1])
        try #require(plan.cuts.forecastKeyframes == [first.startPTS], "the whole-file encode has one IDR, at the start")
        #expect(plan.sceneCuts(of: first) == nil, "the first segment starts as the whole file does")
        let task = try SegmentReader(plan: plan).task(for: second)
        #expect(task.header.sceneCuts == false)

        func idrs(_ task: SegmentTask) throws -> [Int64] {
            let encoded = try SegmentEncoder.encode(task)
            let classifier = RandomAccessClassifier(codecName: "h264", intraOnly: false, extradata: encoded.header.extradata)
            return encoded.packets.filter { p in p.data.withUnsafeBytes { classifier.classify($0, keyFlag: p.isKey) } == .idr }
                .compactMap(\.pts).sorted()
        }
        #expect(try idrs(task) == [second.startPTS], "only the cut's own IDR")
        // libx264 deciding alone makes more in the noise (the whole-file encode makes none there).
        var alone = task
        alone.header.sceneCuts = nil
        #expect(try idrs(alone).count > 1)
    }

    /// Where most frames cost a high share of their intra cost (grain, noise), an extra cut moved its segment's
    /// size and quality away from the whole-file encode's: no extra cut there, whatever the encoders' balance.
    @Test func noExtraCutInGrain() throws {
        let probe = try MediaProbe.probe(try Fixtures.cleanThenNoisy())
        let plan = try JobPlanner.plan(probe, options: JobOptions(settings: EncoderSettings(preset: "veryfast"), segmentSeconds: nil, workers: 2))
        #expect(plan.probe.decodedScenes?.grain == true)
        #expect(plan.cuts.segments.count == 1, "\(plan.cuts.segments.map(\.frameCount))")
    }
}
