import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

/// The lead-in: flat frames a segment's encoder sees before its first frame, whose packets never reach
/// the output.
@Suite(.serialized) struct LeadInTests {
    @Test func aSegmentAfterItsLeadInStartsWithAnIDRAndHoldsOnlyItsFrames() throws {
        let plan = try JobPlanner.plan(try MediaProbe.probe(try SourceKind.closedGOPWithBFrames.make()),
                                       options: quickOptions(segmentSeconds: 2, workers: 2))
        let reader = try SegmentReader(plan: plan)
        #expect(try reader.task(for: plan.cuts.segments[0]).header.leadIn == nil, "the first segment starts as a whole-file encode does")
        let segment = plan.cuts.segments[1]
        let task = try reader.task(for: segment)
        #expect(task.header.leadIn == plan.settings.leadInFrames && plan.settings.leadInFrames > 0)

        let encoded = try SegmentEncoder.encode(task)
        #expect(encoded.header.frameCount == segment.frameCount)
        #expect(encoded.packets.count == segment.frameCount)
        #expect(encoded.packets.allSatisfy { ($0.pts ?? -1) >= segment.startPTS && ($0.pts ?? .max) < segment.endPTS })
        let classifier = RandomAccessClassifier(codecName: "h264", intraOnly: false, extradata: encoded.header.extradata)
        let kinds = encoded.packets.map { p in p.data.withUnsafeBytes { classifier.classify($0, keyFlag: p.isKey) } }
        #expect(kinds.first == .idr && encoded.packets.first?.pts == segment.startPTS, "the first frame kept is an IDR")

        // Without the lead-in the frames and their timestamps are the same; only the encoder's state differs.
        var bare = task
        bare.header.leadIn = nil
        let fresh = try SegmentEncoder.encode(bare)
        #expect(fresh.packets.map(\.pts) == encoded.packets.map(\.pts))
        #expect(fresh.header.extradata == encoded.header.extradata)
        #expect(fresh.packets.map(\.data) != encoded.packets.map(\.data))
    }

    /// A ladder's rungs are capped CRF; their segments still get the job's CRF lead-in, and each rung of such a
    /// segment starts with an IDR at the segment's first frame.
    @Test func aLadderSegmentGetsTheJobsLeadInForEveryRung() throws {
        var options = JobOptions(settings: EncoderSettings(preset: "veryfast"), workers: 2)
        options.ladder = LadderSpec(ladder: try Ladder(parsing: "240,144"), packaging: .hls, segmentSeconds: 1)
        options.segmentSeconds = 2
        let plan = try JobPlanner.plan(try MediaProbe.probe(try SourceKind.closedGOPWithBFrames.make()), options: options)
        let ladder = try #require(plan.ladder)
        #expect(ladder.rungs.allSatisfy { $0.settings.maxrate != nil }, "every rung is capped")
        #expect(plan.cuts.segments.count > 1)
        let reader = try SegmentReader(plan: plan)
        #expect(try reader.task(for: plan.cuts.segments[0]).header.leadIn == nil)
        let segment = plan.cuts.segments[1]
        let task = try reader.task(for: segment)
        #expect(task.header.leadIn == EncoderSettings(preset: "veryfast").leadInFrames)
        let encoded = try SegmentEncoder.encode(task)
        for r in ladder.rungs.indices {
            let rung = encoded.rung(r)
            #expect(rung.packets.count == plan.outputFrames(segment.index), "rung \(r) keeps only its segment's frames")
            let classifier = RandomAccessClassifier(codecName: "h264", intraOnly: false, extradata: rung.header.extradata)
            let first = try #require(rung.packets.first)
            #expect(first.data.withUnsafeBytes { classifier.classify($0, keyFlag: first.isKey) } == .idr)
        }
    }

    @Test func noLeadInWhereTheEncodersQuantisersFollowContent() {
        #expect(EncoderSettings(preset: "medium", crf: 23).leadInFrames == 30)
        #expect(EncoderSettings(preset: "veryfast", crf: 23).leadInFrames == 12)
        #expect(EncoderSettings(preset: "superfast", crf: 23).leadInFrames == 0)
        #expect(EncoderSettings(preset: "medium", crf: nil, bitrate: 2_000_000).leadInFrames == 0)
        #expect(EncoderSettings(preset: "medium", crf: 23, maxrate: 2_000_000, bufsize: 4_000_000).leadInFrames == 0)
    }
}
