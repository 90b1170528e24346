import Testing
@testable import TesseraCore

/// The load rule's decisions: how many segments a job gets, idle and under load.
@Suite struct SegmentationRuleTests {
    let rule = SegmentationRule()
    /// A 720p frame, and a job of `seconds` at 30 fps in 720p pixels.
    static let pixels = 1280.0 * 720
    static func work(_ seconds: Double) -> Double { seconds * 30 * pixels }
    static func load(encoders: Int, free: Int = 0, leased: Double = 0, pending: Double = 0) -> ClusterLoad {
        ClusterLoad(encoders: encoders, freeEncoders: free, leasedWork: work(leased), pendingWork: work(pending))
    }

    @Test func anIdleClusterCutsFinelyAsToday() {
        #expect(rule.segments(seconds: 60, work: Self.work(60), load: .idle) == nil)
        // Nothing waits and an encoder is free: this job is what it does next.
        #expect(rule.segments(seconds: 8, work: Self.work(8), load: Self.load(encoders: 2, free: 1, leased: 1)) == nil)
        // Little in flight against a long job: as good as idle.
        #expect(rule.segments(seconds: 60, work: Self.work(60), load: Self.load(encoders: 2, leased: 2)) == nil)
    }

    @Test func aQueueThatKeepsEveryEncoderBusyGivesAShortClipOneSegment() {
        // Two encoders busy, 30 s queued behind them: an 8 s clip is not cut at all.
        #expect(rule.segments(seconds: 8, work: Self.work(8), load: Self.load(encoders: 2, leased: 2, pending: 30)) == 1)
        // A 5 s clip behind as much work as itself on 8 encoders: one segment per encoder.
        #expect(rule.segments(seconds: 5, work: Self.work(5), load: Self.load(encoders: 8, leased: 1, pending: 4)) == 8)
        // Behind work worth (2 × encoders − 1) times the job: one segment.
        #expect(rule.segments(seconds: 5, work: Self.work(5), load: Self.load(encoders: 8, leased: 5, pending: 70)) == 1)
    }

    @Test func theQueueDrainingCutsFinerAgain() {
        // The same 10 s job planned as the queue ahead shrinks: more segments each time.
        let counts = [200.0, 30, 10, 3, 0.5].map { ahead in
            rule.segments(seconds: 10, work: Self.work(10), load: Self.load(encoders: 4, leased: min(ahead, 4), pending: max(ahead - 4, 0)))
        }
        #expect(counts == [1, 2, 4, 7, nil], "\(counts)")
    }

    @Test func workIsWeighedInPixels() {
        // 30 s of 360p queued is a ninth of 30 s of 1080p: a 1080p clip behind it is cut finer.
        let p360 = 640.0 * 360 * 30, p1080 = 1920.0 * 1080 * 30
        let behind360 = ClusterLoad(encoders: 2, freeEncoders: 0, leasedWork: 2 * p360, pendingWork: 28 * p360)
        let behind1080 = ClusterLoad(encoders: 2, freeEncoders: 0, leasedWork: 2 * p1080, pendingWork: 28 * p1080)
        let job = 10 * p1080
        #expect(rule.segments(seconds: 10, work: job, load: behind1080) == 1)
        #expect(rule.segments(seconds: 10, work: job, load: behind360) == 3)
    }

    @Test func noSegmentIsLongerThanTheLongestAllowed() {
        // A 60 s job behind a long queue still comes in pieces of at most 16 s.
        #expect(rule.segments(seconds: 60, work: Self.work(60), load: Self.load(encoders: 8, leased: 8, pending: 3600)) == 4)
        let shorter = SegmentationRule(longestSegmentSeconds: 60)
        #expect(shorter.segments(seconds: 60, work: Self.work(60), load: Self.load(encoders: 8, leased: 8, pending: 3600)) == 1)
    }

    /// The planner takes the count: one segment has no cut; more fall on forecast keyframes only.
    @Test func thePlannerCutsWhereTheEncodePutsIDRsAsOftenAsTheRuleSays() throws {
        let keyframes = Array(stride(from: 0, to: 600, by: 50))
        let packets = streamWithKeyframes(at: keyframes, frames: 600)
        let planner = try CutPlanner(packets: packets, timeBase: Rational(1, 25), frameRate: Rational(25, 1))
        var options = PlanOptions(segmentSeconds: nil, keyint: 250, minimumSegments: 4)
        options.encoders = 2
        let idle = planner.plan(options)
        #expect(idle.segments.count > 2)
        options.segmentCount = 1
        let one = planner.plan(options)
        checkCoverage(one, packets)
        #expect(one.segments.count == 1 && one.totalPreRollPackets == 0)
        options.segmentCount = 2
        let two = planner.plan(options)
        checkCoverage(two, packets)
        #expect(two.segments.count == 2)
        #expect(two.segments.allSatisfy { keyframes.contains(Int($0.startPTS)) } && two.totalPreRollPackets == 0)
        // A length asked for wins over the load.
        options.segmentSeconds = 2
        #expect(planner.plan(options).segments.count > 2)
    }
}
