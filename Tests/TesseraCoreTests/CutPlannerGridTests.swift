import Testing
@testable import TesseraCore

/// A ladder's plan: packaging cuts on a time grid, segments made of whole runs of them.
struct CutPlannerGridTests {
    /// `count` frames at 25 fps in a 1/12800 time base, a keyframe every `gop`.
    static func planner(frames count: Int, gop: Int = 50) throws -> CutPlanner {
        let packets = (0..<count).map { n in
            PacketInfo(index: n, pts: Int64(n * 512), dts: Int64(n * 512), duration: 512, keyFlag: n % gop == 0, discard: false,
                       size: 1000, randomAccess: n % gop == 0 ? .idr : .none)
        }
        return try CutPlanner(packets: packets, timeBase: Rational(1, 12800), frameRate: Rational(25, 1))
    }

    @Test func cutsFallOnTheFirstFrameAtOrAfterEachMultiple() throws {
        let plan = try Self.planner(frames: 250).planOnGrid(seconds: 2, PlanOptions(segmentSeconds: nil, minimumSegments: 2))
        #expect(plan.packagingCuts == [50, 100, 150, 200].map { Int64($0 * 512) })
        #expect(plan.segments.count == 2)
        #expect(plan.segments.reduce(0) { $0 + $1.frameCount } == 250)
        for segment in plan.segments.dropFirst() { #expect(plan.packagingCuts!.contains(segment.startPTS)) }
    }

    @Test func aGridBetweenFramesTakesTheNextFrame() throws {
        // 1.5 s at 25 fps is frame 37.5: the cut goes to frame 38.
        let plan = try Self.planner(frames: 100).planOnGrid(seconds: 1.5, PlanOptions(segmentSeconds: nil, minimumSegments: 1))
        #expect(plan.packagingCuts == [38, 75].map { Int64($0 * 512) })
    }

    @Test func aSliverAtTheEndJoinsTheSegmentBefore() throws {
        // 4.04 s: a grid point at 4 s would leave one frame.
        let plan = try Self.planner(frames: 101).planOnGrid(seconds: 2, PlanOptions(segmentSeconds: nil, minimumSegments: 1))
        #expect(plan.packagingCuts == [50 * 512])
    }

    @Test func segmentsAreAsManyAsAskedAndNeverMoreThanTheGridAllows() throws {
        let planner = try Self.planner(frames: 1500)
        var options = PlanOptions(segmentSeconds: nil, minimumSegments: 4)
        #expect(planner.planOnGrid(seconds: 6, options).segments.count == 4)
        options.segmentSeconds = 30
        #expect(planner.planOnGrid(seconds: 6, options).segments.count == 2)
        options.minimumSegments = 50
        options.segmentSeconds = nil
        #expect(planner.planOnGrid(seconds: 6, options).segments.count == 10, "one per packaging segment at most")
    }
}
