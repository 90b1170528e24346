import Foundation
import Testing
@testable import TesseraCore

struct BitAllocationTests {
    static let options = "#options: 640x272 fps=25/1 timebase=1/25 bitdepth=8 bframes=3 b_pyramid=2 keyint=250 rc=abr mbtree=1 "
        + "bitrate=400 ratetol=1.0 qcomp=0.60 qpmin=0 qpmax=69 qpstep=4 ip_ratio=1.40 aq=1:1.00"

    /// A segment of `frames` frames at 25 fps: an IDR, then P b b b repeating, each frame's texture bits scaled by `texture`.
    static func segment(frames: Int, texture: Double, mbtree: Bool = true) -> FirstPassStats {
        let types: [Character] = (0..<frames).map { $0 == 0 ? "I" : $0 % 4 == 1 ? "P" : "b" }
        return FirstPassStats(width: 640, height: 272, timeBase: Rational(1, 25), macroblockTree: mbtree,
                              frames: types.map { t in
                                  FirstPassStats.Frame(type: t, duration: 2, qp: 30, textureBits: (t == "I" ? 20_000 : t == "P" ? 4_000 : 800) * texture,
                                                       motionBits: t == "I" ? 0 : 1_000, miscBits: 400, intraMacroblocks: t == "I" ? 680 : 20)
                              })
    }

    @Test func parsesLibx265Stats() throws {
        let text = """
        #options: cpuid=1111039 frame-threads=1 fps=25/1 input-res=320x180 bframes=4 qcomp=0.60 qpstep=4 ipratio=1.40 pbratio=1.30 cutree qpmax=69 qpmin=0
        in:0 out:0 type:I q:32.46 q-aq:26.52 q-noVbv:32.46 q-Rceq:1.00 tex:23337 mv:2967 misc:237 icu:240.00 pcu:0.00 scu:0.00 sc:0 ;
        in:2 out:1 type:P q:36.86 q-aq:32.27 q-noVbv:36.86 q-Rceq:1.00 tex:8801 mv:929 misc:451 icu:30.00 pcu:27.13 scu:182.87 sc:0 ;
        in:1 out:2 type:B q:38.00 q-aq:37.28 q-noVbv:38.00 q-Rceq:1.00 tex:2134 mv:516 misc:267 icu:0.00 pcu:39.65 scu:200.35 sc:0 ;
        """
        let stats = try FirstPassStats(parsing: text)
        #expect(stats.width == 320 && stats.height == 180 && stats.bframes == 4 && stats.macroblockTree)
        #expect(stats.frames.map(\.type) == ["I", "B", "P"], "in input order")
        #expect(stats.frames[0].intraMacroblocks == 240 && stats.frames[1].textureBits == 2134)
        #expect(abs(stats.seconds - 0.12) < 1e-9, "three frames at 25 fps")
        #expect(stats.ipRatio == 1.4 && stats.pbRatio == 1.3)
    }

    @Test func parsesLibx264StatsInInputOrder() throws {
        let text = Self.options + "\n"
            + "in:0 out:0 type:I dur:2 cpbdur:2 q:34.48 aq:26.22 tex:14570 mv:5092 misc:5978 imb:680 pmb:0 smb:0 d:- ref:;\n"
            + "in:2 out:1 type:P dur:2 cpbdur:2 q:34.57 aq:26.42 tex:1619 mv:1539 misc:538 imb:82 pmb:117 smb:481 d:- ref:0 ;\n"
            + "in:1 out:2 type:b dur:2 cpbdur:2 q:34.57 aq:28.81 tex:370 mv:771 misc:259 imb:12 pmb:51 smb:617 d:- ref:0 ;\n"
        let stats = try FirstPassStats(parsing: text)
        #expect(stats.frames.map(\.type) == ["I", "b", "P"])
        #expect(stats.frames[2].textureBits == 1619 && stats.frames[1].intraMacroblocks == 12)
        #expect(stats.macroblockTree && stats.bframes == 3 && stats.macroblocks == 40 * 17)
        #expect(abs(stats.seconds - 0.12) < 1e-9)
    }

    @Test func refusesDamagedStats() {
        #expect(throws: TwoPassError.self) { try FirstPassStats(parsing: "in:0 out:0 type:I dur:2;\n") }
        #expect(throws: TwoPassError.self) { try FirstPassStats(parsing: Self.options + "\nin:0 out:0 type:I dur:2 q:3;\n") }
        #expect(throws: TwoPassError.self) {
            try FirstPassStats(parsing: Self.options + "\nin:1 out:0 type:I dur:2 cpbdur:2 q:30 aq:30 tex:1 mv:1 misc:1 imb:1 pmb:0 smb:0 d:- ref:;\n")
        }
    }

    /// The budgets fill the file's bits, a harder segment gets more of them, and each segment's own second pass,
    /// given its bitrate, settles on the file's rate factor: even quality.
    @Test(arguments: [true, false])
    func budgetsFillTheTargetAndKeepOneRateFactor(mbtree: Bool) throws {
        let segments = [Self.segment(frames: 100, texture: 1, mbtree: mbtree), Self.segment(frames: 100, texture: 6, mbtree: mbtree),
                        Self.segment(frames: 50, texture: 2, mbtree: mbtree)]
        let result = try BitAllocation.allocate(segments, bitrate: 400_000)
        let target = BitAllocation.target(segments, bitrate: 400_000)
        #expect(abs(result.budgets.reduce(0, +) / target - 1) < 1e-6)
        #expect(result.budgets[1] > 2 * result.budgets[0])
        let spent = zip(result.bitrates, segments).reduce(0.0) { $0 + Double($1.0) * $1.1.seconds }
        #expect(abs(spent / target - 1) < 0.01)
        for (k, segment) in segments.enumerated() {
            let own = try BitAllocation.allocate([segment], bitrate: result.bitrates[k])
            #expect(abs(log(own.rateFactor / result.rateFactor)) < 0.02, "segment \(k)")
        }
    }

    /// Under a VBV cap no segment is given more than the cap lets it spend; what the cap keeps from the hard
    /// segment goes to the easy one, and the budgets still fill the file's bits.
    @Test func aCapMovesBitsToTheSegmentsUnderIt() throws {
        let segments = [Self.segment(frames: 100, texture: 1), Self.segment(frames: 100, texture: 6)]
        let free = try BitAllocation.allocate(segments, bitrate: 400_000)
        let capped = try BitAllocation.allocate(segments, bitrate: 400_000, maxrate: 500_000)
        #expect(free.budgets[1] > 500_000 * segments[1].seconds)
        #expect(capped.budgets[1] <= 500_000 * segments[1].seconds * 1.0001)
        #expect(capped.budgets[0] > free.budgets[0])
        #expect(abs(capped.budgets.reduce(0, +) / BitAllocation.target(segments, bitrate: 400_000) - 1) < 1e-6)
    }

    /// A first pass runs at the file's bitrate scaled by the source's own rate over the segment against its rate
    /// over the file, to the power 1.5, within 0.4 and 1.5 times.
    @Test func firstPassesFollowTheSourcesBits() {
        func rate(_ bytes: Int) -> Int {
            BitAllocation.firstPassBitrate(1_000_000, sourceBytes: bytes, seconds: 2, fileSourceBytes: 1_000_000, fileSeconds: 10)
        }
        #expect(rate(200_000) == 1_000_000)
        #expect(rate(240_000) == 1_315_000)
        #expect(rate(180_000) == 854_000)
        #expect(rate(120_000) == 465_000)
        #expect(rate(2_000_000) == 1_500_000 && rate(10_000) == 400_000)
        #expect(BitAllocation.firstPassBitrate(500_000, sourceBytes: 0, seconds: 2, fileSourceBytes: 0, fileSeconds: 10) == 500_000)
    }

    /// Equal segments get equal shares, whatever the target.
    @Test func equalSegmentsShareEqually() throws {
        let result = try BitAllocation.allocate([Self.segment(frames: 60, texture: 1), Self.segment(frames: 60, texture: 1)], bitrate: 900_000)
        #expect(abs(result.budgets[0] / result.budgets[1] - 1) < 1e-9)
        #expect(result.bitrates == [900_000, 900_000])
    }

    @Test func refusesABitrateBelowTheHeaders() {
        // 400 bits of headers a frame at 25 fps: 10 kb/s before any picture.
        #expect(throws: TwoPassError.self) { try BitAllocation.allocate([Self.segment(frames: 50, texture: 1)], bitrate: 5_000) }
    }
}
