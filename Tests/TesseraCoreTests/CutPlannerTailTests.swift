import Testing
@testable import TesseraCore

/// The tail of a plan at keyframes: the segment leased last takes the cores the other encoders would leave
/// idle, as libx264 frame threads fixed in the plan, and no cut is added for it.
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

    @Test func theLastSegmentTakesTheIdleEncodersThreadsNotACut() throws {
        // However cheap an extra IDR looks, the tail is not cut: 250 + 250 + 100, the 100 on two threads.
        for cost in [0.001, 0.01] {
            let (plan, packets) = try Self.twentySeconds(costOfAnExtraCut: cost)
            checkCoverage(plan, packets)
            #expect(plan.segments.map(\.frameCount) == [250, 250, 100])
            #expect(plan.segments.map(\.encoderThreads) == [nil, nil, 2])
            #expect(plan.totalPreRollPackets == 0)
        }
    }

    @Test func noThreadsWhenTheEncodersFinishTogetherAlready() throws {
        let packets = streamWithKeyframes(at: [0, 250], frames: 500)
        let planner = try CutPlanner(packets: packets, timeBase: Rational(1, 30), frameRate: Rational(30, 1))
        var options = PlanOptions(segmentSeconds: nil, keyint: 250, minimumSegments: 4)
        options.encoders = 2
        options.costOfAnExtraCut = 0.001
        let plan = planner.plan(options)
        #expect(plan.segments.map(\.frameCount) == [250, 250])
        #expect(plan.segments.allSatisfy { $0.encoderThreads == nil })
    }

    @Test func theTailTakesAsManyThreadsAsEncodersWouldIdle() throws {
        let packets = streamWithKeyframes(at: [0, 250, 500, 750], frames: 850)
        let planner = try CutPlanner(packets: packets, timeBase: Rational(1, 30), frameRate: Rational(30, 1))
        // Three encoders, 250 × 3 + 100: the 100 starts when all three are free, and takes them all.
        #expect(planner.tailThreads([0, 250, 500, 750], encoders: 3).map { [$0.segment, $0.threads] } == [3, 3])
        // Four: the 100 runs beside the others from the start; it is no tail.
        #expect(planner.tailThreads([0, 250, 500, 750], encoders: 4) == nil)
        // Eight encoders and 250 × 7 + 100: at most four threads, whatever the cluster.
        let eight = streamWithKeyframes(at: (0..<8).map { $0 * 250 }, frames: 1850)
        let wide = try CutPlanner(packets: eight, timeBase: Rational(1, 30), frameRate: Rational(30, 1))
        #expect(wide.tailThreads((0..<8).map { $0 * 250 }, encoders: 8)?.threads == nil, "the 100 runs beside the others")
        #expect(wide.tailThreads((0..<8).map { $0 * 250 }, encoders: 7).map { [$0.segment, $0.threads] } == [7, 4])
        // An encoder busy far past the tail's end: the tail gains nothing worth a thread.
        #expect(planner.tailThreads([0, 750], encoders: 2) == nil)
        #expect(planner.tailThreads([0, 250, 500], encoders: 1) == nil)
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
