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

    @Test func noLeadInWhereTheEncodersQuantisersFollowContent() {
        #expect(EncoderSettings(preset: "medium", crf: 23).leadInFrames == 30)
        #expect(EncoderSettings(preset: "veryfast", crf: 23).leadInFrames == 12)
        #expect(EncoderSettings(preset: "superfast", crf: 23).leadInFrames == 0)
        #expect(EncoderSettings(preset: "medium", crf: nil, bitrate: 2_000_000).leadInFrames == 0)
        #expect(EncoderSettings(preset: "medium", crf: 23, maxrate: 2_000_000, bufsize: 4_000_000).leadInFrames == 0)
    }
}
