/// The tail of a plan at keyframes: the segment leased last, split so that the encoders finish together.
///
/// Segments lease longest first (LPT), so whole GOPs that do not divide evenly over the encoders leave the
/// shortest segment to run last on one encoder while the others idle: a 20 s 1080p input at keyint 250 is
/// 250 + 250 + 100 frames, 350 frame-times on two encoders where 300 would do. Three answers, by their cost:
///
/// - ordering longest first: done already, and it cannot shorten a plan whose segments do not add up evenly;
/// - more encoder threads for the last segment: x264's frame threads change the bitstream with their number, so
///   the count must be fixed per task when it is leased and carried to its worker and any audit of it; frame
///   threads give well under 2× on a short segment, and the second thread takes a core the other encoder's slot
///   owns;
/// - cutting the last segment finer, chosen: it costs one IDR frame a whole-file encode would not make (about
///   `costOfAnExtraCut` of the output, within `extraCutBudget`) and the pre-roll decode of each new piece
///   (`preRollWeight` of a frame each); it saves the idle share of the encoders (a seventh of that job's time).
///   `withExtraCuts` takes it only when the encoding, pre-roll counted, shortens by a twentieth.
extension CutPlanner {
    /// `cuts` with the segment leased last (the shortest, the later of equals) split in pieces that end when the
    /// encoders busy with the others do (water-filling); each piece at least `minimumFrames`, its cuts at `sites`.
    /// `cuts` itself when no split shortens the plan.
    func finishingTogether(_ cuts: [Int], encoders: Int, minimumFrames: Int, sites: CutSites) -> [Int] {
        let lengths = lengths(of: cuts)
        guard encoders > 1, let last = lengths.indices.min(by: { (lengths[$0], -$0) < (lengths[$1], -$1) }) else { return cuts }
        let others = lengths.indices.filter { $0 != last }.map { lengths[$0] }
        let pieces = Self.fill(Self.loads(others, encoders: encoders), with: lengths[last])
        guard pieces.count > 1, pieces.allSatisfy({ $0 >= max(1, minimumFrames) }) else { return cuts }
        // Cut at the sites nearest the pieces' ends, within half the shortest piece.
        let start = cuts[last], reach = (pieces.min() ?? 0) / 2
        var added: [Int] = []
        var end = start
        for piece in pieces.dropLast() {
            end += piece
            guard let cut = sites.nearest(to: end, from: end - reach, through: end + reach, in: self) ?? sites.fallback(end),
                  cut > (added.last ?? start), cut < start + lengths[last] else { return cuts }
            added.append(cut)
        }
        return (cuts + added).sorted()
    }

    /// The work of each of `encoders` after the segments of `lengths`, longest first to the first free one.
    static func loads(_ lengths: [Int], encoders: Int) -> [Int] {
        var load = [Int](repeating: 0, count: max(1, encoders))
        for length in lengths.sorted(by: >) {
            load[load.indices.min { load[$0] < load[$1] }!] += length
        }
        return load
    }

    /// `work` shared among the least loaded of `loads` so that they end together (a piece for each that gets
    /// some, longest first), rounded to whole frames.
    static func fill(_ loads: [Int], with work: Int) -> [Int] {
        let sorted = loads.sorted()
        var count = 1
        // Take encoders in while the common end stays past the next one's load.
        while count < sorted.count, Double(sorted[..<(count + 1)].reduce(0, +) + work) / Double(count + 1) > Double(sorted[count]) {
            count += 1
        }
        let end = Double(sorted[..<count].reduce(0, +) + work) / Double(count)
        var pieces = sorted[..<count].map { Int((end - Double($0)).rounded()) }
        pieces[0] += work - pieces.reduce(0, +)
        return pieces.filter { $0 > 0 }.sorted(by: >)
    }

    /// The busiest encoder's work under longest-first leasing, each segment's pre-roll decode counted as
    /// `preRollWeight` of a frame a packet.
    func span(_ cuts: [Int], encoders: Int, preRollWeight: Double) -> Int {
        let work = zip(cuts, lengths(of: cuts)).map { $1 + Int((preRollWeight * Double(entry(forDisplayPosition: $0).preRoll)).rounded()) }
        return Self.makespan(work, encoders: encoders)
    }
}
