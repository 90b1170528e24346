/// Load balance: a plan whose segments `encoders` processes finish together.
///
/// Snapping targets to the source's GOPs can leave, say, 5 segments for 2 encoders, so the last round
/// runs half idle. The coordinator leases the longest segments first, which is LPT scheduling; so the
/// planner compares the plan it made with plans of a multiple of `encoders` segments of equal length
/// (each cut moved to the nearest clean cut), by the frames the busiest encoder gets under LPT, and
/// keeps the best (fewer segments on a tie: each segment starts with an IDR), never with fewer than
/// `minimumSegments` segments when the first plan had that many.
extension CutPlanner {
    func balanced(_ cuts: [Int], encoders: Int, minimumSegments: Int, maxPreRoll: Int, sites: CutSites = .anywhere) -> [Int] {
        guard encoders > 1, cuts.count > 1 else { return cuts }
        let below = cuts.count / encoders * encoders, above = below + encoders
        var best = cuts
        var bestSpan = Self.makespan(lengths(of: cuts), encoders: encoders)
        let fewest = max(encoders, min(cuts.count, minimumSegments))
        for count in [below, above] where count >= fewest && count <= display.count {
            let candidate = evenCuts(count: count, sites: sites)
            guard preRoll(of: candidate) <= maxPreRoll else { continue }
            let span = Self.makespan(lengths(of: candidate), encoders: encoders)
            if span < bestSpan || (span == bestSpan && candidate.count < best.count) {
                best = candidate
                bestSpan = span
            }
        }
        return best
    }

    /// The last round in halves. Encoders given equal shares still finish apart (they share cores with
    /// each other, the coordinator and the database, and content differs), and the first to finish idles
    /// until the last one does: up to a whole segment (measured: 3 s of a 22 s 1080p job on 2 cores).
    /// Splitting `encoders` of the longest segments in two, at the clean cut nearest their middle, makes
    /// the segments leased last (longest first) half as long, for `encoders` more IDR frames. Only when
    /// there are at least two rounds and each half is at least `minimumFrames` long, and not when the plan
    /// has `encoders` segments of at most half the longest already (a 60 s 1080p plan balanced with cuts
    /// off the forecast keyframes: 10 segments tapered, 8 without, 2 % faster).
    func tapered(_ cuts: [Int], encoders: Int, minimumFrames: Int, sites: CutSites = .anywhere) -> [Int] {
        guard encoders > 1, cuts.count >= 2 * encoders else { return cuts }
        let lengths = lengths(of: cuts)
        // Tapered already: `encoders` segments at most half the longest are leased last anyway.
        let longest = lengths.max() ?? 0
        guard lengths.filter({ 2 * $0 <= longest }).count < encoders else { return cuts }
        var added: [Int] = []
        for k in cuts.indices.sorted(by: { lengths[$0] > lengths[$1] }) where added.count < encoders {
            let start = cuts[k], length = lengths[k]
            guard length >= 2 * max(1, minimumFrames) else { break }
            let margin = max(minimumFrames, length / 4)
            if let split = sites.nearest(to: start + length / 2, from: start + margin, through: start + length - margin, in: self) {
                added.append(split)
            }
        }
        // All or nothing: fewer halves than encoders would leave some encoders a whole segment last.
        guard added.count == encoders else { return cuts }
        return (cuts + added).sorted()
    }

    /// Frames per segment for cut positions.
    func lengths(of cuts: [Int]) -> [Int] {
        zip(cuts, cuts.dropFirst() + [display.count]).map { $1 - $0 }
    }

    /// `count` segments of equal length, each cut moved to the nearest site within half a segment (a clean
    /// cut, with no pre-roll, when anywhere will do), or left where it is when anywhere will do and there
    /// is none, else dropped.
    func evenCuts(count: Int, sites: CutSites = .anywhere) -> [Int] {
        let n = display.count
        let length = Double(n) / Double(count)
        let reach = Int(length / 2)
        var cuts = [0]
        for k in 1..<count {
            let ideal = Int((Double(k) * length).rounded())
            guard let position = sites.nearest(to: ideal, from: max(1, ideal - reach), through: min(n - 1, ideal + reach), in: self)
                    ?? sites.fallback(ideal) else { continue }
            if position > cuts[cuts.count - 1], position < n { cuts.append(position) }
        }
        return cuts
    }

    /// The work of the busiest of `encoders` when the longest segment goes to the first free encoder.
    static func makespan(_ lengths: [Int], encoders: Int) -> Int {
        loads(lengths, encoders: encoders).max()!
    }
}
