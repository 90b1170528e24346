import Testing
@testable import TesseraCore

/// The load rule's decisions: how many segments a job gets, idle and under load.
@Suite struct SegmentationRuleTests {
    let rule = SegmentationRule()
    /// A 720p frame, and a job of `seconds` at 30 fps in 720p pixels.
    static let pixels = 1280.0 * 720
    static func work(_ seconds: Double) -> Double { seconds * 30 * pixels }

    /// A load; `quiet`: seconds since the last submit (0: jobs are still being submitted, so no job is
    /// the end of the queue).
    static func load(encoders: Int, free: Int = 0, leased: Double = 0, pending: Double = 0, queued: Int = 0,
                     quiet: Double = 0) -> ClusterLoad {
        ClusterLoad(encoders: encoders, freeEncoders: free, leasedWork: work(leased), pendingWork: work(pending), queuedJobs: queued,
                    quietSeconds: quiet)
    }
    /// The count the rule gives (nil: cut finely), and whether anywhere.
    func decide(_ seconds: Double, _ load: ClusterLoad) -> Segmentation? {
        rule.segments(seconds: seconds, work: Self.work(seconds), load: load)
    }

    @Test func anIdleClusterCutsFinelyAsToday() {
        #expect(decide(60, .idle) == nil)
        // Nothing waits and an encoder is free: this job is what it will do next.
        #expect(decide(8, Self.load(encoders: 2, free: 1, leased: 1)) == nil)
        // Little in flight against a long job: as good as idle.
        #expect(decide(60, Self.load(encoders: 2, leased: 2)) == nil)
    }

    @Test func aQueueThatKeepsEveryEncoderBusyGivesAShortClipOneSegment() {
        // Two encoders busy, 30 s pending behind them: an 8 s clip is not cut at all.
        #expect(decide(8, Self.load(encoders: 2, leased: 2, pending: 30, queued: 3)) == Segmentation(count: 1))
        // Jobs queued behind it keep the encoders busy too, even with nothing ahead: the first of 20
        // uploads on an idle cluster is one segment.
        #expect(decide(5, Self.load(encoders: 2, free: 2, queued: 19)) == Segmentation(count: 1))
        // A 5 s clip on 8 encoders with as much work left besides it: one segment per encoder, at IDRs.
        #expect(decide(5, Self.load(encoders: 8, leased: 1, queued: 1)) == Segmentation(count: 8))
        // Work left worth (2 × encoders) times the job: one segment.
        #expect(decide(5, Self.load(encoders: 8, leased: 5, pending: 70, queued: 1)) == Segmentation(count: 1))
    }

    @Test func theQueueDrainingCutsFinerAgain() {
        // The same 10 s job planned as the work ahead shrinks: more segments each time.
        let counts = [200.0, 30, 10, 3].map { ahead in
            decide(10, Self.load(encoders: 4, leased: min(ahead, 4), pending: max(ahead - 4, 0), queued: 1))?.count
        }
        #expect(counts == [1, 2, 3, 4], "\(counts)")
    }

    @Test func theQueuesLastJobIsCutIntoEqualPiecesAnywhere() {
        // Nothing queued behind: its pieces are balanced over the encoders, cut wherever they fall.
        #expect(decide(5, Self.load(encoders: 2, leased: 2, pending: 3)) == Segmentation(count: 2, anywhere: true))
        // Behind much work it is still one piece: the work ahead keeps the other encoders busy.
        #expect(decide(5, Self.load(encoders: 2, leased: 2, pending: 30)) == Segmentation(count: 1))
        // With a job queued behind it, only where the encode puts IDR frames.
        #expect(decide(5, Self.load(encoders: 2, leased: 2, pending: 3, queued: 1)) == Segmentation(count: 2))
    }

    @Test func theEndOfAQueueIsCutFinerWhereverPiecesFall() {
        // One job behind on 2 encoders, as much work ahead as the job, nothing submitted for 5 s: the end of
        // the queue. Pieces half as large (3, not 2), where equal pieces need them.
        #expect(decide(5, Self.load(encoders: 2, leased: 2, pending: 3, queued: 1, quiet: 5)) == Segmentation(count: 3, anywhere: true))
        // The same while jobs are still being submitted: more may come, at the encode's IDR frames.
        #expect(decide(5, Self.load(encoders: 2, leased: 2, pending: 3, queued: 1, quiet: 0.2)) == Segmentation(count: 2))
        // Little ahead (the start of a burst whose submits are slow): not the end either.
        #expect(decide(5, Self.load(encoders: 2, leased: 1, queued: 1, quiet: 5)) == Segmentation(count: 2))
        // Enough jobs behind to even the encoders out: not the end.
        #expect(decide(5, Self.load(encoders: 2, leased: 2, pending: 3, queued: 2, quiet: 5)) == Segmentation(count: 1))
    }

    @Test func workIsWeighedInPixels() {
        // 30 s of 360p queued is a ninth of 30 s of 1080p: a 1080p clip behind it is cut finer.
        let p360 = 640.0 * 360 * 30, p1080 = 1920.0 * 1080 * 30
        let behind360 = ClusterLoad(encoders: 2, freeEncoders: 0, leasedWork: 2 * p360, pendingWork: 28 * p360, queuedJobs: 1, quietSeconds: 0)
        let behind1080 = ClusterLoad(encoders: 2, freeEncoders: 0, leasedWork: 2 * p1080, pendingWork: 28 * p1080, queuedJobs: 1, quietSeconds: 0)
        let job = 10 * p1080
        #expect(rule.segments(seconds: 10, work: job, load: behind1080)?.count == 1)
        #expect(rule.segments(seconds: 10, work: job, load: behind360)?.count == 2)
    }

    @Test func noSegmentIsLongerThanTheLongestAllowed() {
        // A 60 s job behind a long queue still comes in pieces of at most 16 s.
        #expect(decide(60, Self.load(encoders: 8, leased: 8, pending: 3600))?.count == 4)
        let shorter = SegmentationRule(longestSegmentSeconds: 60)
        #expect(shorter.segments(seconds: 60, work: Self.work(60), load: Self.load(encoders: 8, leased: 8, pending: 3600))?.count == 1)
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
        options.segmentation = Segmentation(count: 1)
        let one = planner.plan(options)
        checkCoverage(one, packets)
        #expect(one.segments.count == 1 && one.totalPreRollPackets == 0)
        options.segmentation = Segmentation(count: 2)
        let two = planner.plan(options)
        checkCoverage(two, packets)
        #expect(two.segments.count == 2)
        #expect(two.segments.allSatisfy { keyframes.contains(Int($0.startPTS)) } && two.totalPreRollPackets == 0)
        // A length asked for wins over the load.
        options.segmentSeconds = 2
        #expect(planner.plan(options).segments.count > 2)
    }
}
