/// The tail of a plan at keyframes: the segment leased last, given the cores of the encoders that would idle
/// while it runs.
///
/// Segments lease longest first (LPT), so whole GOPs that do not divide evenly over the encoders leave the
/// shortest segment to run last on one encoder while the others idle: a 20 s 1080p input at keyint 250 is
/// 250 + 250 + 100 frames, 350 frame-times on two encoders where 300 would do. Three answers, by their cost:
///
/// - ordering longest first: done already, and it cannot shorten a plan whose segments do not add up evenly;
/// - cutting the last segment finer: one IDR frame a whole-file encode would not make, for each piece. On
///   phone-like footage an IDR is 2 to 5 % of a short clip's output, where the source's sizes say a tenth of
///   that (bench/FORECAST.md), so the cut was taken where it cost more than it saved;
/// - more encoder threads for the last segment, chosen: libx264's frame threads change the bitstream with their
///   number, so the count is fixed in the plan (`PlannedSegment.encoderThreads`) and every encode of the segment,
///   an audit's or a retry's, takes the same. Two frame threads run a segment about 1.6 times as fast
///   (`frameThreadGain`); no bit is added. x265 and SVT-AV1 take the host's cores anyway (their bytes do not
///   depend on it). `tailThreads` gives the threads only when the job's encoding shortens by a twentieth.
extension CutPlanner {
    /// What each libx264 frame thread past the first adds to a segment's speed (1080p veryfast, 100 frames:
    /// 1.4 to 1.7 times with two).
    static let frameThreadGain = 0.6
    /// At most this many: the plan does not know the cores of the host that runs the tail, and every encode of
    /// the segment must take the same count (a host with fewer cores runs them in turn).
    static let mostTailThreads = 4

    /// The segment of `cuts` leased last (the shortest, the later of equals) and the threads it takes: as many
    /// as the encoders that would share its frames to finish together (water-filling), when that shortens the
    /// busiest encoder's work by a twentieth; nil when it does not.
    func tailThreads(_ cuts: [Int], encoders: Int) -> (segment: Int, threads: Int)? {
        let lengths = lengths(of: cuts)
        guard encoders > 1, let last = lengths.indices.min(by: { (lengths[$0], -$0) < (lengths[$1], -$1) }) else { return nil }
        let others = lengths.indices.filter { $0 != last }.map { lengths[$0] }
        let loads = Self.loads(others, encoders: encoders)
        let threads = min(Self.mostTailThreads, Self.fill(loads, with: lengths[last]).count)
        guard threads > 1 else { return nil }
        let start = Double(loads.min() ?? 0), busiest = Double(loads.max() ?? 0), length = Double(lengths[last])
        let before = max(busiest, start + length)
        let after = max(busiest, start + length / (1 + Self.frameThreadGain * Double(threads - 1)))
        return after <= 0.95 * before ? (last, threads) : nil
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
}
