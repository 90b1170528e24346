import Testing
@testable import TesseraCore

/// Pictures the demuxer gave no pts get the time a decoder shows them at.
struct PresentationTimesTests {
    /// Closed GOPs with B-frames (pts step 1, dts one step behind) and the decoder's display order.
    static func stream(frames: Int = 30) -> (packets: [PacketInfo], display: [Int]) {
        let packets = SyntheticStream.closedGOP(frames: frames, gop: 15)
        let display = packets.indices.sorted { packets[$0].pts! < packets[$1].pts! }
        return (packets, display)
    }

    static func dropping(_ packets: [PacketInfo], _ which: (PacketInfo) -> Bool) -> [PacketInfo] {
        packets.map { p in var p = p; if which(p) { p.pts = nil }; return p }
    }

    @Test func referencePicturesWithoutPTSShowWhenTheNextDecodes() throws {
        // An MPEG program stream: only B-frames (shown as they decode) carry a pts.
        let (packets, display) = Self.stream()
        let stripped = Self.dropping(packets) { $0.randomAccess == .idr || $0.pts! > $0.dts! + 1 }
        #expect(stripped.filter { $0.pts == nil }.count >= 10)
        let filled = try PresentationTimes.fill(stripped, displayOrder: display)
        #expect(filled.map(\.pts) == packets.map(\.pts))
        #expect(filled.filter(\.ptsInferred).count == stripped.filter { $0.pts == nil }.count)
        #expect(filled.allSatisfy { $0.ptsInferred == ($0.demuxedPTS == nil) })
        let planner = try CutPlanner(packets: filled, timeBase: Rational(1, 25), frameRate: Rational(25, 1))
        #expect(planner.frameCount == 30)
    }

    @Test func noPTSAtAllTakesTheDecodeTimesInDisplayOrder() throws {
        // AVI: decode times only; the first picture shows at the first decode time.
        let (packets, display) = Self.stream()
        let stripped = Self.dropping(packets) { _ in true }
        let filled = try PresentationTimes.fill(stripped, displayOrder: display)
        #expect(display.map { filled[$0].pts! } == (0..<30).map { Int64($0 - 1) })
    }

    @Test func withoutDecodeTimesTheGapsAreSpacedEvenly() throws {
        var (packets, display) = Self.stream()
        packets = Self.dropping(packets) { $0.index % 4 == 1 }
        packets[7].dts = nil
        let filled = try PresentationTimes.fill(packets, displayOrder: display)
        #expect(display.map { filled[$0].pts! } == (0..<30).map { Int64($0) })
    }

    @Test func timesThatCannotRiseAreRefused() {
        // Neighbours one tick apart leave no time between them for the picture without one.
        var packets = (0..<4).map { PacketInfo(index: $0, pts: Int64($0), dts: nil, duration: 1, keyFlag: $0 == 0,
                                                discard: false, size: 10, randomAccess: $0 == 0 ? .idr : .none) }
        packets[2].pts = nil
        packets[3].pts = 2
        #expect(throws: PlanError.missingTimestamps(1)) { try PresentationTimes.fill(packets, displayOrder: [0, 1, 2, 3]) }
    }

    @Test func aPictureTheDecoderDidNotShowDoesNotShortenTheTimeline() throws {
        // No pts at all, and one B-frame (packet 2) damaged: the pictures after it keep their times.
        let (packets, display) = Self.stream()
        let stripped = Self.dropping(packets) { _ in true }
        let filled = try PresentationTimes.fill(stripped, displayOrder: display.filter { $0 != 2 })
        let last = display.last!
        #expect(filled[last].pts == packets[last].pts! - 1)
        #expect(filled[2].pts == nil)
    }

    @Test func sparseTimesExtendAtTheStepPerPicture() throws {
        // Every fifth picture timed, no decode times: the last four follow the last timed one a frame apart.
        let packets = (0..<20).map { PacketInfo(index: $0, pts: $0 % 5 == 0 ? Int64($0) * 40 : nil, dts: nil, duration: 40,
                                                keyFlag: $0 == 0, discard: false, size: 10, randomAccess: $0 == 0 ? .idr : .none) }
        let filled = try PresentationTimes.fill(packets, displayOrder: Array(0..<20))
        #expect(filled.map(\.pts) == (0..<20).map { Int64($0) * 40 })
    }

    @Test func aRawStreamIsTimedAFrameApartFromZero() throws {
        // Neither pts nor dts anywhere (`ffmpeg -f h264`): the k-th picture shown k steps from 0, B-frames reordered.
        let (packets, display) = Self.stream()
        let raw = packets.map { p in var p = p; p.pts = nil; p.dts = nil; return p }
        #expect(throws: PlanError.missingTimestamps(30)) { try PresentationTimes.fill(raw, displayOrder: display) }
        let filled = try PresentationTimes.fill(raw, displayOrder: display, step: 40)
        #expect(display.enumerated().allSatisfy { k, index in filled[index].pts == Int64(k) * 40 && filled[index].ptsInferred })
        #expect(filled.map(\.pts) != raw.indices.map { Int64($0) * 40 }, "shown in display order, not decode order")
        // A step is for streams without any time: one timed picture keeps the other rules.
        var oneTimed = raw
        oneTimed[0].pts = 0
        #expect(throws: PlanError.missingTimestamps(29)) { try PresentationTimes.fill(oneTimed, displayOrder: display, step: 40) }
        #expect(raw.seekTime(forPacket: 3) == nil && filled.seekTime(forPacket: 3) == nil, "nothing a demuxer could seek to")
    }

    @Test func aPictureWithoutDecodeTimeIsSoughtAtTheOneBefore() {
        var (packets, _) = Self.stream()
        packets[4].dts = nil
        packets[4].ptsInferred = true
        #expect(packets.seekTime(forPacket: 4) == packets[3].dts)
        #expect(packets.seekTime(forPacket: 5) == packets[5].dts)
        packets[0].dts = nil
        #expect(packets.seekTime(forPacket: 0) == packets[0].pts)
    }

    @Test func packetsTheDecoderDidNotShowStayUntimed() throws {
        let (packets, display) = Self.stream()
        let stripped = Self.dropping(packets) { $0.index == 2 }
        let filled = try PresentationTimes.fill(stripped, displayOrder: display.filter { $0 != 2 })
        #expect(filled[2].pts == nil && !filled[2].ptsInferred)
    }
}
