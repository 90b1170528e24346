import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine

/// The inputs the engine must cut frame-exactly, each made by ffmpeg.
enum SourceKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case closedGOPWithBFrames
    case openGOP
    case hevc
    case mpegTSWithStartOffset
    case variableFrameRate
    case singleKeyframe
    case prores
    case fullRangeH264
    case fullRangeMJPEG

    var testDescription: String { rawValue }

    var hasAudio: Bool { ![.variableFrameRate, .fullRangeH264, .fullRangeMJPEG].contains(self) }

    func make() throws -> String {
        let l = Fixtures.lavfi
        switch self {
        case .closedGOPWithBFrames:
            return try Fixtures.media("closed.mp4", l + ["-t", "6", "-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-bf", "3", "-c:a", "aac"])
        case .openGOP:
            return try Fixtures.media("open.mp4", l + ["-t", "6", "-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-bf", "3",
                                                      "-x264-params", "open-gop=1:b-pyramid=normal", "-c:a", "aac"])
        case .hevc:
            return try Fixtures.media("hevc.mp4", l + ["-t", "6", "-c:v", "libx265", "-preset", "ultrafast",
                                                      "-x265-params", "keyint=25:open-gop=1:log-level=error", "-c:a", "aac"])
        case .mpegTSWithStartOffset:
            return try Fixtures.media("offset.ts", l + ["-t", "6", "-c:v", "libx264", "-preset", "veryfast", "-g", "25",
                                                       "-c:a", "aac", "-output_ts_offset", "10", "-f", "mpegts"])
        case .variableFrameRate:
            return try Fixtures.media("vfr.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "6",
                                                  "-vf", "select='not(mod(n\\,3))+gte(n\\,60)'", "-fps_mode", "vfr",
                                                  "-c:v", "libx264", "-preset", "veryfast", "-g", "25"])
        case .singleKeyframe:
            return try Fixtures.media("single-idr.mp4", l + ["-t", "8", "-c:v", "libx264", "-preset", "veryfast", "-g", "1000",
                                                            "-keyint_min", "1000", "-sc_threshold", "0", "-c:a", "aac"])
        case .prores:
            return try Fixtures.media("prores.mov", l + ["-t", "4", "-c:v", "prores_ks", "-profile:v", "2", "-c:a", "pcm_s16le"])
        case .fullRangeH264:
            // Phones record full-range H.264; it must not come out washed out.
            return try Fixtures.media("full-range.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "3",
                                                         "-pix_fmt", "yuvj420p", "-c:v", "libx264", "-preset", "veryfast", "-g", "25"])
        case .fullRangeMJPEG:
            return try Fixtures.media("mjpeg.mov", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "3",
                                                    "-pix_fmt", "yuvj422p", "-c:v", "mjpeg", "-q:v", "3"])
        }
    }
}

func quickOptions(segmentSeconds: Double = 1, workers: Int = 2) -> JobOptions {
    JobOptions(settings: EncoderSettings(preset: "veryfast"), segmentSeconds: segmentSeconds, workers: workers)
}

@Suite(.serialized) struct FrameExactnessTests {
    /// A frame shifted by one in this test pattern scores under 28 dB; a correct one over 38 dB.
    static let psnrFloor = 33.0

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
        #expect(check.minimumPSNR > Self.psnrFloor, "a dropped, repeated or shifted frame scores below the floor")
        #expect(check.maximumTimestampDrift < 0.001)

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
