/// Plans cut points from the demuxed packet list, without decoding.
///
/// Segment k is the pts range [T_k, T_k+1). It ships the packets in decode order from the last
/// random-access point that reaches the range's first frame, through the last packet whose pts is below
/// T_k+1 (with open GOP that runs past the next keyframe, into its leading pictures). The decoder then
/// drops every frame outside the range, so every source frame is shown exactly once.
public struct CutPlanner: Sendable {
    public let packets: [PacketInfo]
    public let timeBase: Rational
    /// The stream's average frame rate when known; otherwise estimated from the timestamps.
    public let frameRate: Rational?

    /// Shown frames in display order: (pts, decode index).
    let display: [(pts: Int64, index: Int)]
    /// suffixMinIndex[j]: smallest decode index among display[j...].
    let suffixMinIndex: [Int]
    /// prefixMaxIndex[j]: largest decode index among display[...j].
    let prefixMaxIndex: [Int]
    let randomAccessIndices: [Int]
    let firstRandomAccess: Int
    /// The last picture's pts plus its duration (`end(of:packets:)`).
    let endPTS: Int64

    public init(packets: [PacketInfo], timeBase: Rational, frameRate: Rational?) throws(PlanError) {
        self.packets = packets
        self.timeBase = timeBase
        self.frameRate = frameRate
        randomAccessIndices = packets.filter { $0.randomAccess != .none }.map(\.index)
        guard packets.contains(where: { $0.pts != nil }) else { throw PlanError.noTimestamps }
        try Self.checkRising(packets, timeBase: timeBase)
        guard let first = randomAccessIndices.first else { throw PlanError.noRandomAccessPoint }
        firstRandomAccess = first
        guard let originPTS = packets[first].pts else { throw PlanError.noRandomAccessPoint }
        var shown: [(pts: Int64, index: Int)] = []
        for p in packets[first...] {
            guard let pts = p.pts, !p.discard, pts >= originPTS else { continue }
            shown.append((pts, p.index))
        }
        shown.sort { $0.pts < $1.pts }
        for j in shown.indices.dropFirst() where shown[j].pts == shown[j - 1].pts {
            throw PlanError.duplicateTimestamp(shown[j].pts)
        }
        guard !shown.isEmpty else { throw PlanError.noFrames }
        display = shown
        var suffix = [Int](repeating: 0, count: shown.count)
        var running = Int.max
        for j in stride(from: shown.count - 1, through: 0, by: -1) {
            running = min(running, shown[j].index)
            suffix[j] = running
        }
        suffixMinIndex = suffix
        var prefix = [Int](repeating: 0, count: shown.count)
        running = Int.min
        for j in shown.indices {
            running = max(running, shown[j].index)
            prefix[j] = running
        }
        prefixMaxIndex = prefix
        endPTS = Self.end(of: shown, packets: packets)
    }

    public var frameCount: Int { display.count }

    /// Decode timestamps may stall or step back a little (damaged streams), but not start their clock again. Only
    /// dts count: a pts goes back by the B-frames' reordering, seconds at a low frame rate.
    static func checkRising(_ packets: [PacketInfo], timeBase: Rational) throws(PlanError) {
        let second = Int64(1 / timeBase.doubleValue)
        var latest = Int64.min
        for p in packets {
            guard let t = p.dts else { continue }
            if latest != .min, t < latest - second {
                throw .timestampsRestart(packet: p.index, from: timeBase.seconds(latest), to: timeBase.seconds(t))
            }
            latest = max(latest, t)
        }
    }

    /// Frames per second, from the stream's rate or else the timestamps.
    public var framesPerSecond: Double {
        if let rate = frameRate, rate.isValid { return rate.doubleValue }
        let span = timeBase.seconds(endPTS - display[0].pts)
        return span > 0 ? Double(display.count) / span : 25
    }

    /// The last picture's pts plus its duration: its packet's, unless missing (then the pictures' mean step) or
    /// under half their usual step (FFmpeg reads one tick for every packet of a B-frame MOV at timescale 600), then
    /// that step.
    static func end(of display: [(pts: Int64, index: Int)], packets: [PacketInfo]) -> Int64 {
        let last = display[display.count - 1]
        var duration = packets[last.index].duration
        if duration <= 0 {
            duration = display.count > 1 ? max(1, (last.pts - display[0].pts) / Int64(display.count - 1)) : 1
        } else if let step = PictureSteps.usual(display.map(\.pts)), duration * 2 < step {
            duration = step
        }
        return last.pts + duration
    }

    /// The random-access point a decoder starts from to show display position `j` and everything after it,
    /// and how many packets it decodes before reaching the first one it needs.
    func entry(forDisplayPosition j: Int) -> (packet: Int, preRoll: Int) {
        let needed = suffixMinIndex[j]
        let cutPTS = display[j].pts
        // Largest random-access point at or before `needed` in decode order that shows no later than the cut.
        var lo = 0, hi = randomAccessIndices.count - 1, found = -1
        while lo <= hi {
            let mid = (lo + hi) / 2
            if randomAccessIndices[mid] <= needed { found = mid; lo = mid + 1 } else { hi = mid - 1 }
        }
        var k = found
        while k > 0, let pts = packets[randomAccessIndices[k]].pts, pts > cutPTS { k -= 1 }
        let start = randomAccessIndices[max(k, 0)]
        return (start, needed - start)
    }

    /// Plans the cuts: where a whole-file encode puts IDR frames (see `planAtKeyframes`), or, when a
    /// segment length was asked for, wherever that length needs them.
    public func plan(_ options: PlanOptions) -> CutPlan {
        guard let segmentSeconds = options.segmentSeconds else { return planAtKeyframes(options) }
        let n = display.count
        let fps = framesPerSecond
        let keyint = max(1, options.keyint)
        // No segment longer than the whole stream, however long the request.
        var target = Int(min(Double(n), max(1, (segmentSeconds * fps).rounded())))
        // Whole GOPs: round to the nearest multiple of keyint, unless asked for well under one GOP.
        if target * 2 >= keyint {
            target = max(1, Int((Double(target) / Double(keyint)).rounded())) * keyint
        }
        target = max(1, target)
        // Enough segments to keep every encoder busy, but none shorter than the minimum.
        let shortest = max(1, Int((options.minimumSegmentSeconds * fps).rounded()))
        if options.minimumSegments > 1, n / target < options.minimumSegments {
            target = max(shortest, n / options.minimumSegments)
        }
        var cuts = chooseCuts(target: target)
        // Bound the pre-roll decode work: fewer, longer segments until it fits.
        let maxPreRoll = Int(options.maxPreRollRatio * Double(n))
        var length = target
        while preRoll(of: cuts) > maxPreRoll, cuts.count > 1 {
            length = Int((Double(length) * 1.25).rounded(.up))
            cuts = chooseCuts(target: length)
        }
        cuts = balanced(cuts, encoders: options.encoders, minimumSegments: options.minimumSegments, maxPreRoll: maxPreRoll)
        cuts = tapered(cuts, encoders: options.encoders, minimumFrames: shortest)
        return makePlan(cuts: cuts, target: length)
    }

    /// Display positions where segments start; the first is 0.
    func chooseCuts(target: Int) -> [Int] {
        let n = display.count
        var cuts = [0]
        var cursor = 0
        while true {
            let ideal = cursor + target
            // A tail shorter than a quarter of a segment joins the last one.
            let shortest = max(1, target / 4)
            if ideal >= n || n - ideal < shortest { break }
            var best = nearestCleanCut(to: ideal, from: max(cursor + 1, ideal - target / 2), through: min(n - shortest, ideal + target / 2))
            // No clean cut near: cut with pre-roll, unless what is left is short enough to be one segment.
            if best == nil {
                if n - cursor <= target + target / 2 { break }
                best = ideal
            }
            cuts.append(best!)
            cursor = best!
        }
        return cuts
    }

    /// The decode-order index of the packet shown at display position `j`.
    public func packetIndex(atDisplayPosition j: Int) -> Int { display[j].index }

    /// The last packet, in decode order, that a decoder needs to show display positions up to `j`.
    public func lastPacketIndex(throughDisplayPosition j: Int) -> Int { prefixMaxIndex[j] }

    /// The timestamp of the frame shown at display position `j`.
    public func pts(atDisplayPosition j: Int) -> Int64 { display[j].pts }

    /// The display position of the shown frame with timestamp `pts`, if any.
    public func displayPosition(of pts: Int64) -> Int? {
        var lo = 0, hi = display.count - 1
        while lo <= hi {
            let mid = (lo + hi) / 2
            if display[mid].pts == pts { return mid }
            if display[mid].pts < pts { lo = mid + 1 } else { hi = mid - 1 }
        }
        return nil
    }

    /// The clean cut (a display position with no pre-roll) nearest `ideal` from `low` through `high`,
    /// the earlier of two as near; nil when there is none.
    func nearestCleanCut(to ideal: Int, from low: Int, through high: Int) -> Int? {
        cheapest(from: low, through: high) { j in entry(forDisplayPosition: j).preRoll == 0 ? Double(abs(j - ideal)) : nil }
    }

    /// The cut from `low` through `high` whose distance from `ideal` plus its pre-roll decode (each packet
    /// weighed as `preRollWeight` of a frame) is least, the earlier of two as cheap; nil when the range is empty.
    func cheapestCut(to ideal: Int, from low: Int, through high: Int, preRollWeight: Double) -> Int? {
        cheapest(from: low, through: high) { j in Double(abs(j - ideal)) + preRollWeight * Double(entry(forDisplayPosition: j).preRoll) }
    }

    /// The position from `low` through `high` of least `cost` (nil: not a candidate), the earlier of two
    /// as cheap.
    private func cheapest(from low: Int, through high: Int, _ cost: (Int) -> Double?) -> Int? {
        guard low <= high else { return nil }
        var best: Int?
        var bestCost = Double.infinity
        for j in low...high {
            if let c = cost(j), c < bestCost { bestCost = c; best = j }
        }
        return best
    }

    func preRoll(of cuts: [Int]) -> Int {
        cuts.reduce(0) { $0 + entry(forDisplayPosition: $1).preRoll }
    }

    func makePlan(cuts: [Int], target: Int, forecast: KeyframeForecast? = nil) -> CutPlan {
        let n = display.count
        let end = endPTS
        var segments: [PlannedSegment] = []
        for (k, start) in cuts.enumerated() {
            let stop = k + 1 < cuts.count ? cuts[k + 1] : n
            let entry = entry(forDisplayPosition: start)
            segments.append(PlannedSegment(
                index: k,
                startPTS: display[start].pts,
                endPTS: stop < n ? display[stop].pts : end,
                firstPacket: entry.packet,
                lastPacket: prefixMaxIndex[stop - 1],
                frameCount: stop - start,
                preRollPackets: entry.preRoll,
                entry: packets[entry.packet].randomAccess))
        }
        let kinds = Set(randomAccessIndices.map { packets[$0].randomAccess })
        let structure: GOPStructure
        if kinds.contains(.intra) {
            structure = .intraOnly
        } else if kinds.contains(.openGOP) {
            structure = .openGOP
        } else if kinds.contains(.keyframe) {
            structure = .keyframes
        } else {
            structure = .closedGOP
        }
        return CutPlan(
            timeBase: timeBase,
            segments: segments,
            frameCount: n,
            firstPTS: display[0].pts,
            endPTS: end,
            structure: structure,
            randomAccessPoints: randomAccessIndices.count,
            keyFlagsNotRandomAccess: packets.filter { $0.keyFlag && $0.randomAccess == .none }.count,
            undecodableLeadingPackets: firstRandomAccess,
            totalPreRollPackets: segments.reduce(0) { $0 + $1.preRollPackets },
            targetSegmentFrames: target,
            forecastKeyframes: forecast?.keyframes.map { display[$0].pts },
            sceneChanges: forecast?.sceneCuts.map { display[$0].pts })
    }
}
