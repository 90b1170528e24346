import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

@Suite(.serialized) struct FrameExactnessTests {
    @Test(arguments: SourceKind.allCases)
    func everySourceFrameAppearsOnceInOrder(_ kind: SourceKind) throws {
        let source = try kind.make()
        let output = Fixtures.output("\(kind.rawValue).mp4")
        let report = try LocalTranscoder().transcode(input: source, output: output, options: quickOptions())
        defer { try? FileManager.default.removeItem(atPath: output) }

        #expect(report.plan.cuts.segments.count >= 3, "a segmented plan, not one piece")
        let check = try FrameCheck.compare(source: source, output: output, width: 320, height: 240)
        #expect(check.sourceFrames > 0)
        #expect(check.outputFrames == check.sourceFrames)
        #expect(check.minimumPSNR > FrameCheck.psnrFloor, "a dropped, repeated or shifted frame scores below the floor")
        if kind.isRawStream {
            // ffprobe times no picture of a raw stream; ffmpeg reads it a frame apart at its rate (25 fps here).
            let times = try FrameCheck.timestamps(output)
            #expect(FrameCheck.drift(times.indices.map { Double($0) / 25 }, times) ?? .infinity < 0.001, "\(times.prefix(8))")
        } else {
            #expect(check.maximumTimestampDrift < 0.001)
        }

        let facts = try OutputFacts.read(output)
        #expect(facts.countedFrames == check.sourceFrames)
        #expect(facts.codecs == (kind.hasAudio ? ["h264", "aac"] : ["h264"]))
        #expect(facts.moovBeforeMdat, "faststart: \(facts.topLevelBoxes)")
        #expect(facts.decodeErrors.isEmpty, "ffmpeg -v error printed: \(facts.decodeErrors)")
        if kind.hasAudio, let audioStart = facts.audioStart {
            // TS audio carries the AAC priming as real samples, so it starts one frame early there.
            #expect(abs(audioStart - facts.videoStart) <= 1024.0 / 48000 + 0.001, "audio starts with video")
        }
    }

    /// A QuickTime file at the classic timescale of 600 with B-frames, whose packets FFmpeg reads as one tick long:
    /// the output's last picture still lasts a frame, so its track is as long as the source's (3 s at 60 fps).
    @Test func oneTickSourceDurationsGiveWholeFrames() throws {
        let source = try Fixtures.media("timescale-600.mov", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=60:d=3", "-c:v", "libx264",
                                                             "-preset", "veryfast", "-bf", "3", "-g", "30", "-video_track_timescale", "600"])
        let output = Fixtures.output("timescale-600.mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let report = try LocalTranscoder().transcode(input: source, output: output, options: quickOptions())
        #expect(report.plan.cuts.segments.count >= 2)
        let facts = try OutputFacts.read(output)
        #expect(facts.countedFrames == 180)
        #expect(abs(facts.videoDuration - 3) < 0.001, "the video track lasts \(facts.videoDuration) s")
    }

    @Test func openGOPPlanUsesRecoveryPointsAndLeadingPictures() throws {
        let probe = try MediaProbe.probe(try SourceKind.openGOP.make())
        let plan = try JobPlanner.plan(probe, options: quickOptions())
        #expect(plan.cuts.structure == .openGOP)
        #expect(plan.cuts.segments.dropFirst().allSatisfy { $0.entry == .openGOP })
        // Where the next I-frame has leading pictures (frames after it in decode order that show before it),
        // the segment ships that I-frame and runs past it to decode them.
        var reachedThrough = 0
        for s in plan.cuts.segments.dropLast() {
            let next = probe.packets.firstIndex { $0.pts == s.endPTS }!
            let leading = probe.packets[(next + 1)...].prefix { ($0.pts ?? 0) < s.endPTS }
            if !leading.isEmpty {
                #expect(s.lastPacket >= next + leading.count)
                reachedThrough += 1
            }
        }
        #expect(reachedThrough > 0, "the fixture has open-GOP leading pictures")
    }

    @Test func singleKeyframeInputIsSplitWithReportedPreRoll() throws {
        let probe = try MediaProbe.probe(try SourceKind.singleKeyframe.make())
        let plan = try JobPlanner.plan(probe, options: quickOptions(segmentSeconds: 2))
        #expect(plan.cuts.randomAccessPoints == 1)
        #expect(plan.cuts.segments.count >= 3)
        #expect(plan.cuts.totalPreRollPackets > 0)
        #expect(plan.cuts.preRollRatio <= 1.5)
    }

    @Test func intraOnlyIsRecognised() throws {
        let probe = try MediaProbe.probe(try SourceKind.prores.make())
        let plan = try JobPlanner.plan(probe, options: quickOptions())
        #expect(plan.cuts.structure == .intraOnly)
        #expect(plan.cuts.totalPreRollPackets == 0)
    }
}
