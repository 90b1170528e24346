/// Where a plan may cut.
enum CutSites {
    /// Anywhere, preferring clean cuts (no pre-roll): a segment length was asked for.
    case anywhere
    /// Only at these display positions, sorted: the forecast keyframes.
    case only([Int])
    /// At these display positions, sorted, where one is near; else as `anywhere`.
    case preferring([Int])
    /// At these display positions, sorted, where one is near; else where the frames and the pre-roll
    /// decode (weighed as `preRollWeight` of a frame each) come nearest an equal share.
    case balancing([Int], preRollWeight: Double)

    /// The site nearest `ideal` from `low` through `high` (the earlier of two as near); nil when none.
    func nearest(to ideal: Int, from low: Int, through high: Int, in planner: CutPlanner) -> Int? {
        switch self {
        case .anywhere:
            return planner.nearestCleanCut(to: ideal, from: low, through: high)
        case .only(let positions):
            return Self.nearest(in: positions, to: ideal, from: low, through: high)
        case .preferring(let positions):
            return Self.nearest(in: positions, to: ideal, from: low, through: high)
                ?? planner.nearestCleanCut(to: ideal, from: low, through: high)
        case .balancing(let positions, let weight):
            return Self.nearest(in: positions, to: ideal, from: low, through: high)
                ?? planner.cheapestCut(to: ideal, from: low, through: high, preRollWeight: weight)
        }
    }

    /// Where to cut when no site is near `ideal`: there, unless only the listed sites will do.
    func fallback(_ ideal: Int) -> Int? {
        if case .only = self { return nil }
        return ideal
    }

    static func nearest(in positions: [Int], to ideal: Int, from low: Int, through high: Int) -> Int? {
        guard low <= high else { return nil }
        // The first position at or after `ideal`, and the one before it.
        var lo = 0, hi = positions.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if positions[mid] < ideal { lo = mid + 1 } else { hi = mid }
        }
        return [lo - 1, lo].filter { positions.indices.contains($0) && (low...high).contains(positions[$0]) }
            .map { positions[$0] }
            .min { abs($0 - ideal) < abs($1 - ideal) || (abs($0 - ideal) == abs($1 - ideal) && $0 < $1) }
    }
}

/// Plans that cut only where a whole-file encode puts IDR frames: the output then has the IDR frames,
/// and with the lead-in the quantisers, of one encode of the whole file.
extension CutPlanner {
    /// Display positions of the random-access points that are shown, sorted.
    var randomAccessDisplayPositions: [Int] {
        randomAccessIndices.compactMap { packets[$0].pts.flatMap(displayPosition(of:)) }.sorted()
    }

    /// What an IDR frame adds to a stream like this one, as a share of its size: the source's keyframes
    /// against its other frames (a keyframe-only source: its first frame against the average).
    public var estimatedCostOfAnExtraCut: Double {
        let total = packets.reduce(0) { $0 + $1.size }
        guard total > 0 else { return 0 }
        let keys = randomAccessIndices.map { packets[$0].size }
        let others = packets.count - keys.count
        let keyMean = Double(keys.reduce(0, +)) / Double(max(1, keys.count))
        let otherMean = others > 0 ? Double(total - keys.reduce(0, +)) / Double(others) : Double(total) / Double(packets.count)
        return max(0, keyMean - otherMean) / Double(total)
    }

    /// Where to look for scene changes by decoding, between pairs of random-access points: every pair
    /// of a stream whose keyframes come at a fixed cadence (every second of an intra-only one); of a
    /// stream whose keyframes mark its scenes, the pairs at least four fifths of `keyint` apart, where
    /// its encoder's keyframe may be a cadence's or a weak scene change the output's would not share,
    /// and a scene change it missed may hide. None with a single keyframe.
    public func sceneAnalysisIntervals(_ options: PlanOptions) -> [ClosedRange<Int>] {
        var points = randomAccessDisplayPositions
        guard points.count >= 2 else { return [] }
        if points.count == display.count {
            points = Array(stride(from: 0, to: display.count, by: max(1, Int(framesPerSecond.rounded()))))
        }
        let pairs = zip(points, points.dropFirst()).map { $0...$1 }
        let keyint = max(1, options.keyint)
        guard !KeyframeForecast.sceneCuts(randomAccessPoints: points, keyint: keyint).isEmpty else { return pairs }
        return pairs.filter { 5 * ($0.upperBound - $0.lowerBound) >= 4 * keyint }
    }

    /// The least share of its intra cost with which a frame `gop` frames after an IDR passes libx264's
    /// scene-cut test (1 − its bias).
    public func sceneCutThreshold(gop: Int, _ options: PlanOptions) -> Double {
        let keyint = max(1, options.keyint)
        return 1 - KeyframeForecast.bias(gop, keyint: keyint, minimum: max(1, min(keyintMinimum(options), keyint)))
    }

    /// x264's `keyint-min`: as given, else a tenth of `keyint` and at most a second.
    func keyintMinimum(_ options: PlanOptions) -> Int {
        options.keyintMinimum ?? max(1, min(max(1, options.keyint) / 10, Int(framesPerSecond)))
    }

    /// Where a whole-file encode with these options puts its IDR frames.
    public func forecast(_ options: PlanOptions) -> KeyframeForecast {
        let keyint = max(1, options.keyint)
        let minimum = keyintMinimum(options)
        let read = KeyframeForecast.sceneCuts(randomAccessPoints: randomAccessDisplayPositions, keyint: keyint)
        let changes = options.decodedScenes?.changes(claims: read)
            ?? SceneChange.certain(at: read)
        return KeyframeForecast.replay(frames: display.count, changes: changes, keyint: keyint, minimumInterval: minimum,
                                       flashes: options.bframes > 0, detectsScenes: options.detectsScenes)
    }

    /// The intervals among `intervals` in which a frame's packet is far larger than the others' (a scene cut
    /// or a flash the source's encoder coded with little prediction), wherever their keyframes look alike.
    public func intervalsWithLargeFrames(_ intervals: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
        intervals.filter { interval in
            guard interval.upperBound - interval.lowerBound >= 3 else { return false }
            // Against the 80th percentile: B-frames make most packets small, their references stay a fifth or more.
            let sizes = ((interval.lowerBound + 1)..<interval.upperBound).map { packets[display[$0].index].size }.sorted()
            return sizes.last! > 3 * max(1, sizes[sizes.count * 4 / 5])
        }
    }

    /// Cuts at forecast keyframes about `defaultSegmentSeconds` apart (closer when `minimumSegments` asks
    /// for more, never under `minimumSegmentSeconds`), balanced and tapered over the encoders as a plan of
    /// asked-for length is, but among the keyframes only. Cuts elsewhere are added only to keep every
    /// encoder busy, when they shorten the encoding by a twentieth and their estimated cost
    /// (`costOfAnExtraCut`) stays within `extraCutBudget`; the segment leased last may take the cores the
    /// other encoders leave idle (`tailThreads`).
    func planAtKeyframes(_ options: PlanOptions) -> CutPlan {
        let n = display.count
        let fps = framesPerSecond
        let forecast = forecast(options)
        let sites = CutSites.only(forecast.keyframes)
        let shortest = max(1, Int((options.minimumSegmentSeconds * fps).rounded()))
        var target = max(1, Int((PlanOptions.defaultSegmentSeconds * fps).rounded()))
        if options.minimumSegments > 1 { target = min(target, max(shortest, n / options.minimumSegments)) }
        let maxPreRoll = Int(options.maxPreRollRatio * Double(n))
        if let segmentation = options.segmentation, segmentation.anywhere, segmentation.count > 1 {
            // The queue's last job: equal pieces, at the encode's IDRs where one is near.
            let cuts = evenCuts(count: segmentation.count, sites: .balancing(forecast.keyframes, preRollWeight: options.preRollWeight))
            if preRoll(of: cuts) <= maxPreRoll { return makePlan(cuts: cuts, target: n / segmentation.count, forecast: forecast) }
        }
        if let count = options.segmentation?.count {
            // The load keeps the encoders busy: only the cuts asked for, where the encode puts IDRs anyway.
            var length = max(1, n / max(1, count))
            var cuts = count <= 1 ? [0] : keyframeCuts(forecast.keyframes, target: length, shortest: shortest)
            while preRoll(of: cuts) > maxPreRoll, cuts.count > 1 {
                length = Int((Double(length) * 1.25).rounded(.up))
                cuts = keyframeCuts(forecast.keyframes, target: length, shortest: shortest)
            }
            return makePlan(cuts: cuts, target: length, forecast: forecast)
        }
        var length = target
        var cuts = keyframeCuts(forecast.keyframes, target: length, shortest: shortest)
        while preRoll(of: cuts) > maxPreRoll, cuts.count > 1 {
            length = Int((Double(length) * 1.25).rounded(.up))
            cuts = keyframeCuts(forecast.keyframes, target: length, shortest: shortest)
        }
        cuts = balanced(cuts, encoders: options.encoders, minimumSegments: options.minimumSegments, maxPreRoll: maxPreRoll, sites: sites)
        cuts = tapered(cuts, encoders: options.encoders, minimumFrames: shortest, sites: sites)
        cuts = withExtraCuts(cuts, options, shortest: shortest, maxPreRoll: maxPreRoll)
        var plan = makePlan(cuts: cuts, target: length, forecast: forecast)
        if let tail = tailThreads(cuts, encoders: options.encoders) { plan.segments[tail.segment].encoderThreads = tail.threads }
        return plan
    }

    /// Cuts among `keyframes` (sorted, from 0): from each cut, the keyframe nearest `target` frames on
    /// within half a target either way, else the first one past half a target; a last segment shorter
    /// than `shortest` or a quarter target joins the one before.
    func keyframeCuts(_ keyframes: [Int], target: Int, shortest: Int) -> [Int] {
        let n = display.count
        let sites = CutSites.only(keyframes)
        let tail = max(shortest, target / 4)
        var cuts = [0]
        while let cursor = cuts.last {
            let ideal = cursor + target
            guard n - cursor > target + target / 2 || ideal < n - tail else { break }
            let near = sites.nearest(to: ideal, from: cursor + max(1, target / 2), through: min(n - tail, ideal + target / 2), in: self)
            guard let next = near ?? keyframes.first(where: { $0 > cursor + target / 2 && $0 <= n - tail }) else { break }
            cuts.append(next)
        }
        return cuts
    }

    /// The plan balanced and tapered again with cuts elsewhere allowed, when that pays (see
    /// `planAtKeyframes`); else `cuts` (whose tail may then take more threads, `tailThreads`).
    func withExtraCuts(_ cuts: [Int], _ options: PlanOptions, shortest: Int, maxPreRoll: Int) -> [Int] {
        let keyframes = Set(cuts)
        guard options.encoders > 1, !options.constantQuality || options.decodedScenes?.grain != true else { return cuts }
        let cost = options.costOfAnExtraCut ?? estimatedCostOfAnExtraCut
        let affordable = cost > 0 ? Int(options.extraCutBudget / cost) : Int.max
        guard affordable > 0 else { return cuts }
        // A clip of one forecast GOP is split evenly, pre-roll counted (a 5 s clip with source keyframes
        // every 2 s: 75 + 75 frames, not 60 + 90); longer plans move their cuts to clean ones, where a
        // plan of many segments balances as well and decodes nothing more.
        let sites = cuts.count > 1 ? CutSites.preferring(cuts) : CutSites.balancing(cuts, preRollWeight: options.preRollWeight)
        var candidate = cuts.count > 1
            ? balanced(cuts, encoders: options.encoders, minimumSegments: max(options.minimumSegments, options.encoders),
                       maxPreRoll: maxPreRoll, sites: sites)
            : evenCuts(count: options.encoders, sites: sites)
        candidate = tapered(candidate, encoders: options.encoders, minimumFrames: shortest, sites: sites)
        func fits(_ candidate: [Int]) -> Bool {
            let added = Set(candidate).subtracting(keyframes).count
            return added > 0 && added <= affordable && preRoll(of: candidate) <= maxPreRoll
                && lengths(of: candidate).allSatisfy({ $0 >= shortest })
        }
        let pays = Double(Self.makespan(lengths(of: candidate), encoders: options.encoders))
            <= 0.95 * Double(Self.makespan(lengths(of: cuts), encoders: options.encoders))
        return fits(candidate) && pays ? candidate : cuts
    }
}
