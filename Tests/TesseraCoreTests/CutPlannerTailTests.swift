import Testing
@testable import TesseraCore

/// The tail of a plan at keyframes: the segment leased last is cut finer when the encoders would otherwise
/// finish apart, and the extra IDR is within the budget.
@Suite struct CutPlannerTailTests {
    /// 20 s at 30 fps with keyframes every 250 frames, planned for two encoders.
    static func twentySeconds(costOfAnExtraCut: Double) throws -> (CutPlan, [PacketInfo]) {
        let packets = streamWithKeyframes(at: [0, 250, 500], frames: 600)
        let planner = try CutPlanner(packets: packets, timeBase: Rational(1, 30), frameRate: Rational(30, 1))
        var options = PlanOptions(segmentSeconds: nil, keyint: 250, minimumSegments: 4)
        options.encoders = 2
        options.costOfAnExtraCut = costOfAnExtraCut
        return (planner.plan(options), packets)
    }

    @Test func theLastSegmentIsSplitSoThatTheEncodersFinishTogether() throws {
        let (plan, packets) = try Self.twentySeconds(costOfAnExtraCut: 0.001)
        checkCoverage(plan, packets)
        // 250 + 250 + 100 ran 350 frame-times on two encoders; the 100 in halves, 300 (the cut decodes 50 from 500).
        #expect(plan.segments.map(\.frameCount) == [250, 250, 50, 50])
        #expect(CutPlanner.makespan(plan.segments.map(\.frameCount), encoders: 2) == 300)
        #expect((40...50).contains(plan.totalPreRollPackets), "the cut decodes the GOP from 500")
    }

    @Test func noSplitWhenAnIDRCostsMoreThanTheBudget() throws {
        let (plan, _) = try Self.twentySeconds(costOfAnExtraCut: 0.01)
        #expect(plan.segments.map(\.frameCount) == [250, 250, 100])
    }

    @Test func noSplitWhenTheEncodersFinishTogetherAlready() throws {
        let packets = streamWithKeyframes(at: [0, 250], frames: 500)
        let planner = try CutPlanner(packets: packets, timeBase: Rational(1, 30), frameRate: Rational(30, 1))
        var options = PlanOptions(segmentSeconds: nil, keyint: 250, minimumSegments: 4)
        options.encoders = 2
        options.costOfAnExtraCut = 0.001
        #expect(planner.plan(options).segments.map(\.frameCount) == [250, 250])
    }

    @Test func theLastSegmentFillsTheEncodersUpToACommonEnd() {
        #expect(CutPlanner.fill([250, 250], with: 100) == [50, 50])
        // The encoder free first takes the longer piece; both end at 325.
        #expect(CutPlanner.fill([300, 250], with: 100) == [75, 25])
        // An encoder busy past the end the others reach gets nothing.
        #expect(CutPlanner.fill([500, 0], with: 100) == [100])
        #expect(CutPlanner.fill([0, 0, 90], with: 30) == [15, 15])
        #expect(CutPlanner.loads([250, 100, 250], encoders: 2) == [350, 250])
    }
}
