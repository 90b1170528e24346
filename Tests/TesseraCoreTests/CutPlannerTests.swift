import Testing
@testable import TesseraCore

/// Builds decode-order packet lists of typical GOP structures.
enum SyntheticStream {
    /// Closed GOPs "I P B B P B B ..." in decode order with `gop` frames each; pts step 1.
    static func closedGOP(frames: Int, gop: Int, bframes: Int = 2) -> [PacketInfo] {
        var packets: [PacketInfo] = []
        var start = 0
        while start < frames {
            let count = min(gop, frames - start)
            // Display order within the GOP: 0..<count. Decode order: I, then each anchor before its B-frames.
            var order = [0]
            var anchor = 0
            while anchor < count - 1 {
                let next = min(anchor + bframes + 1, count - 1)
                order.append(next)
                order.append(contentsOf: (anchor + 1)..<next)
                anchor = next
            }
            for (n, d) in order.enumerated() {
                packets.append(PacketInfo(index: packets.count, pts: Int64(start + d), dts: Int64(start + n - 1),
                                          duration: 1, keyFlag: d == 0, discard: false, size: 100,
                                          randomAccess: d == 0 ? .idr : .none))
            }
            start += count
        }
        return packets
    }

    /// Open GOPs: each I-frame is followed in decode order by `leading` B-frames that show before it.
    static func openGOP(frames: Int, gop: Int, leading: Int = 2) -> [PacketInfo] {
        var packets: [PacketInfo] = []
        func add(_ pts: Int, _ access: RandomAccess) {
            packets.append(PacketInfo(index: packets.count, pts: Int64(pts), dts: Int64(packets.count - leading),
                                      duration: 1, keyFlag: access != .none, discard: false, size: 100, randomAccess: access))
        }
        // First GOP starts with an IDR and no leading pictures.
        var gopStart = 0
        while gopStart < frames {
            let end = min(gopStart + gop, frames)
            add(gopStart, gopStart == 0 ? .idr : .openGOP)
            if gopStart > 0 {
                // Leading pictures of this I-frame: the last `leading` frames of the previous GOP.
                for d in (gopStart - leading)..<gopStart { add(d, .none) }
            }
            let trailingEnd = end < frames ? end - leading : end
            var p = gopStart + 1
            while p < trailingEnd { add(p, .none); p += 1 }
            gopStart = end
        }
        return packets
    }
}

/// Every frame (pts) appears in exactly one segment, segments are contiguous and in order, and each
/// segment's packets start at a random-access point and contain all its frames.
func checkCoverage(_ plan: CutPlan, _ packets: [PacketInfo]) {
    let shown = packets.compactMap(\.pts).filter { $0 >= plan.firstPTS }.sorted()
    var seen: [Int64] = []
    for (k, s) in plan.segments.enumerated() {
        #expect(s.index == k)
        if k > 0 { #expect(s.startPTS == plan.segments[k - 1].endPTS) }
        #expect(packets[s.firstPacket].randomAccess != .none)
        let range = packets[s.firstPacket...s.lastPacket]
        let inRange = range.compactMap(\.pts).filter { $0 >= s.startPTS && $0 < s.endPTS }.sorted()
        #expect(inRange.count == s.frameCount)
        seen += inRange
    }
    #expect(seen == shown)
    #expect(plan.frameCount == shown.count)
}

@Suite struct CutPlannerTests {
    @Test func closedGOPCutsAtKeyframesWithoutPreRoll() throws {
        let packets = SyntheticStream.closedGOP(frames: 250, gop: 25)
        let plan = try CutPlanner(packets: packets, timeBase: Rational(1, 25), frameRate: Rational(25, 1))
            .plan(PlanOptions(segmentSeconds: 2, keyint: 50))
        checkCoverage(plan, packets)
        #expect(plan.segments.count == 5)
        #expect(plan.totalPreRollPackets == 0)
        #expect(plan.structure == .closedGOP)
        #expect(plan.segments.allSatisfy { $0.frameCount == 50 })
    }

    @Test func openGOPSegmentsReachIntoTheNextGOPsLeadingPictures() throws {
        let packets = SyntheticStream.openGOP(frames: 200, gop: 25)
        let plan = try CutPlanner(packets: packets, timeBase: Rational(1, 25), frameRate: Rational(25, 1))
            .plan(PlanOptions(segmentSeconds: 1, keyint: 25))
        checkCoverage(plan, packets)
        #expect(plan.structure == .openGOP)
        #expect(plan.segments.count == 8)
        // Segment 0 shows frames 0..<25; frames 23 and 24 are leading pictures decoded after I(25).
        let first = plan.segments[0]
        #expect(first.endPTS == 25)
        #expect(packets[first.lastPacket].pts == 24)
        #expect(packets[first.firstPacket...first.lastPacket].contains { $0.pts == 25 })
    }

    @Test func singleKeyframeIsStillCutWithBoundedPreRoll() throws {
        let packets = SyntheticStream.closedGOP(frames: 600, gop: 600)
        let plan = try CutPlanner(packets: packets, timeBase: Rational(1, 30), frameRate: Rational(30, 1))
            .plan(PlanOptions(segmentSeconds: 2, keyint: 60, minimumSegments: 3, maxPreRollRatio: 1.5))
        checkCoverage(plan, packets)
        #expect(plan.segments.count >= 3)
        #expect(plan.randomAccessPoints == 1)
        #expect(plan.totalPreRollPackets > 0)
        #expect(plan.preRollRatio <= 1.5)
        #expect(plan.segments.allSatisfy { $0.firstPacket == 0 })
    }

    @Test func preRollBudgetLengthensSegments() throws {
        let packets = SyntheticStream.closedGOP(frames: 600, gop: 600)
        let planner = try CutPlanner(packets: packets, timeBase: Rational(1, 30), frameRate: Rational(30, 1))
        let tight = planner.plan(PlanOptions(segmentSeconds: 1, keyint: 30, maxPreRollRatio: 0.5))
        let loose = planner.plan(PlanOptions(segmentSeconds: 1, keyint: 30, maxPreRollRatio: 100))
        #expect(tight.preRollRatio <= 0.5)
        #expect(tight.segments.count < loose.segments.count)
        checkCoverage(tight, packets)
    }

    @Test func segmentsAreWholeGOPsAndShortTailsAreAbsorbed() throws {
        // 8 s at 25 fps is 200 frames: rounded to one 250-frame GOP, so cuts land on the source's keyframes.
        let packets = SyntheticStream.closedGOP(frames: 1000, gop: 250)
        let planner = try CutPlanner(packets: packets, timeBase: Rational(1, 25), frameRate: Rational(25, 1))
        let plan = planner.plan(PlanOptions(segmentSeconds: 8, keyint: 250, minimumSegments: 4))
        #expect(plan.segments.map(\.frameCount) == [250, 250, 250, 250])
        #expect(plan.totalPreRollPackets == 0)
        // Keyframes every 350 frames, 250-frame target: after the cut at 700 no clean cut is near, and the
        // 350 frames left are short enough to stay one segment rather than take a pre-roll cut.
        let longer = SyntheticStream.closedGOP(frames: 1050, gop: 350)
        let tail = try CutPlanner(packets: longer, timeBase: Rational(1, 25), frameRate: Rational(25, 1))
            .plan(PlanOptions(segmentSeconds: 10, keyint: 250))
        #expect(tail.segments.map(\.frameCount) == [350, 350, 350])
        #expect(tail.totalPreRollPackets == 0)
        checkCoverage(tail, longer)
    }

    @Test func segmentsAreBalancedOverTheEncoders() throws {
        // 60 s at 30 fps with 2 s GOPs, 8 s target: snapping alone makes 7 x 240 + 120 frames, and with
        // longest-first leasing one of 2 encoders gets 960 frames while the other gets 840.
        let packets = SyntheticStream.closedGOP(frames: 1800, gop: 60)
        let planner = try CutPlanner(packets: packets, timeBase: Rational(1, 30), frameRate: Rational(30, 1))
        var options = PlanOptions(segmentSeconds: 8, keyint: 250, minimumSegments: 4)
        let unbalanced = planner.plan(options)
        #expect(unbalanced.segments.map(\.frameCount) == [240, 240, 240, 240, 240, 240, 240, 120])
        #expect(CutPlanner.makespan(unbalanced.segments.map(\.frameCount), encoders: 2) == 960)
        options.encoders = 2
        let balanced = planner.plan(options)
        checkCoverage(balanced, packets)
        #expect(balanced.totalPreRollPackets == 0)
        #expect(balanced.segments.count % 2 == 0)
        #expect(CutPlanner.makespan(balanced.segments.map(\.frameCount), encoders: 2) == 900)
        // 3 encoders: 600 frames each is reachable with whole GOPs.
        options.encoders = 3
        let three = planner.plan(options)
        checkCoverage(three, packets)
        #expect(CutPlanner.makespan(three.segments.map(\.frameCount), encoders: 3) == 600)
        // Never fewer segments than asked for: 75 intra frames in 25-frame segments for 2 encoders become
        // 4 segments, not 2.
        let intra = (0..<75).map {
            PacketInfo(index: $0, pts: Int64($0), dts: Int64($0), duration: 1, keyFlag: true, discard: false, size: 10, randomAccess: .intra)
        }
        var short = PlanOptions(segmentSeconds: 1, keyint: 25, minimumSegments: 4)
        short.encoders = 2
        let few = try CutPlanner(packets: intra, timeBase: Rational(1, 25), frameRate: Rational(25, 1)).plan(short)
        #expect(few.segments.map(\.frameCount) == [19, 19, 18, 19])
        // One encoder: nothing to balance (cuts that two encoders would move stay where they are).
        let snapped = planner.chooseCuts(target: 240)
        #expect(planner.balanced(snapped, encoders: 2, minimumSegments: 4, maxPreRoll: .max) != snapped)
        #expect(planner.balanced(snapped, encoders: 1, minimumSegments: 4, maxPreRoll: .max) == snapped)
    }

    @Test func theLastRoundIsHalved() throws {
        // 60 s at 30 fps with 2 s GOPs for 2 encoders: 8 balanced segments (6 x 240 + 2 x 180), then the
        // two longest split at a clean cut in their middle, so each encoder's last segment is 120 frames.
        let packets = SyntheticStream.closedGOP(frames: 1800, gop: 60)
        let planner = try CutPlanner(packets: packets, timeBase: Rational(1, 30), frameRate: Rational(30, 1))
        var options = PlanOptions(segmentSeconds: 8, keyint: 250, minimumSegments: 4)
        options.encoders = 2
        let plan = planner.plan(options)
        checkCoverage(plan, packets)
        #expect(plan.totalPreRollPackets == 0)
        #expect(plan.segments.map(\.frameCount).sorted(by: >) == [240, 240, 240, 240, 180, 180, 120, 120, 120, 120])
        #expect(CutPlanner.makespan(plan.segments.map(\.frameCount), encoders: 2) == 900)
        // One round only (as many segments as encoders): nothing is split.
        var one = PlanOptions(segmentSeconds: 30, keyint: 250)
        one.encoders = 2
        #expect(planner.plan(one).segments.map(\.frameCount) == [900, 900])
        // Halves shorter than the minimum segment are not made.
        options.minimumSegmentSeconds = 5
        #expect(planner.plan(options).segments.count == 8)
        // Tapered already: two segments of at most half the longest are leased last; nothing is split.
        let short = [0, 360, 720, 1080, 1440, 1620]
        #expect(planner.tapered(short, encoders: 2, minimumFrames: 30) == short)
        // One such segment is not enough for two encoders.
        let lone = [0, 360, 720, 1080, 1440, 1650]
        #expect(planner.tapered(lone, encoders: 2, minimumFrames: 30).count == 8)
    }

    @Test func makespanIsLongestFirst() {
        // What the coordinator's lease order does, not the optimum (5+5 | 4+3+3 would be 10).
        #expect(CutPlanner.makespan([5, 5, 4, 3, 3], encoders: 2) == 11)
        #expect(CutPlanner.makespan([240, 240, 240, 240, 240, 120], encoders: 2) == 720)
        #expect(CutPlanner.makespan([7], encoders: 4) == 7)
    }

    @Test func intraOnlyCutsAnywhere() throws {
        let packets = (0..<100).map {
            PacketInfo(index: $0, pts: Int64($0), dts: Int64($0), duration: 1, keyFlag: true, discard: false, size: 10, randomAccess: .intra)
        }
        let plan = try CutPlanner(packets: packets, timeBase: Rational(1, 25), frameRate: Rational(25, 1))
            .plan(PlanOptions(segmentSeconds: 0.8, keyint: 20))
        checkCoverage(plan, packets)
        #expect(plan.structure == .intraOnly)
        #expect(plan.segments.count == 5)
        #expect(plan.totalPreRollPackets == 0)
    }

    @Test func leadingUndecodablePacketsAndDiscardedFramesAreNotShown() throws {
        var packets = SyntheticStream.closedGOP(frames: 100, gop: 25)
        // Drop the first GOP's I-frame: its remaining packets cannot be decoded.
        packets[0].randomAccess = .none
        // Mark one frame of the second GOP as discarded by an edit list.
        let plan = try CutPlanner(packets: packets, timeBase: Rational(1, 25), frameRate: nil)
            .plan(PlanOptions(segmentSeconds: 1, keyint: 25))
        #expect(plan.firstPTS == 25)
        #expect(plan.frameCount == 75)
        #expect(plan.undecodableLeadingPackets == 25)
        checkCoverage(plan, packets)
    }

    @Test func enoughSegmentsForEveryWorker() throws {
        let packets = SyntheticStream.closedGOP(frames: 300, gop: 30)
        let plan = try CutPlanner(packets: packets, timeBase: Rational(1, 30), frameRate: Rational(30, 1))
            .plan(PlanOptions(segmentSeconds: 10, keyint: 300, minimumSegments: 8))
        #expect(plan.segments.count >= 8)
        checkCoverage(plan, packets)
    }

    @Test func noRandomAccessPointIsAnError() {
        let packets = (0..<10).map {
            PacketInfo(index: $0, pts: Int64($0), dts: Int64($0), duration: 1, keyFlag: false, discard: false, size: 10, randomAccess: .none)
        }
        #expect(throws: PlanError.noRandomAccessPoint) {
            _ = try CutPlanner(packets: packets, timeBase: Rational(1, 25), frameRate: nil)
        }
    }

    /// Two streams joined end to end (each clock starting again) are refused, saying where; B-frames' pts going
    /// back a few frames in decode order are not a restart.
    @Test func timestampsThatStartAgainAreAnError() throws {
        let one = SyntheticStream.closedGOP(frames: 100, gop: 25)
        let joined = one + one.map { p in
            var p = p
            p.index += one.count
            return p
        }
        #expect(throws: PlanError.timestampsRestart(packet: 100, from: 3.92, to: -0.04)) {
            _ = try CutPlanner(packets: joined, timeBase: Rational(1, 25), frameRate: nil)
        }
        _ = try CutPlanner(packets: SyntheticStream.closedGOP(frames: 100, gop: 25, bframes: 7), timeBase: Rational(1, 25), frameRate: nil)
        // One picture a second with B-frames, the first packets without dts (Matroska): pts go back seconds.
        var slow = SyntheticStream.closedGOP(frames: 20, gop: 20, bframes: 3)
        slow[0].dts = nil
        slow[1].dts = nil
        _ = try CutPlanner(packets: slow, timeBase: Rational(1, 1), frameRate: nil)
    }
}
