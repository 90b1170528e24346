import Foundation

/// An AV1 segment's first pass: its bytes at constant qualities (CRFs). libavcodec 5.1 hands SVT-AV1 no statistics of
/// its own, so Tessera's second pass runs constant quality, at the CRF that gives the segment its share of the file's
/// bits. A segment's size falls about exponentially with the CRF, at a rate that changes along the range and with the
/// footage (grain collapses at high CRFs), so sizes either side of the CRF sought predict it near there. See
/// docs/architecture.md, *AV1 in two passes*.
public struct AV1FirstPass: Hashable, Sendable {
    /// The CRFs a fast preset encodes the segment at first, to find roughly where its share of the bits lies.
    public static let probes = [10, 30, 50]
    /// SVT-AV1's preset for the probes: 12, or the job's own when that is faster (at 12 a segment took under half of
    /// preset 10's time, at a size within a few percent of it at CRF 28 to 44 but 0.6 times it at CRF 15).
    public static func probePreset(forJobPreset preset: String) -> String { String(max(12, Int(preset) ?? 12)) }
    /// How far either side of the probes' CRF the job's preset then encodes it.
    public static let spread = 3

    /// The two CRFs the job's preset encodes a segment at, `spread` either side of `crf`, within SVT-AV1's range.
    public static func anchors(around crf: Int) -> [Int] {
        let range = VideoCodec.av1.crfRange
        let centre = min(max(crf, Int(range.lowerBound) + spread), Int(range.upperBound) - spread)
        return [centre - spread, centre + spread]
    }

    public var seconds: Double
    /// Bytes at each CRF measured: `probes` on the fast preset's round, `anchors` on the job's.
    public var bytes: [Int: Int]

    public init(seconds: Double, bytes: [Int: Int]) {
        self.seconds = seconds
        self.bytes = bytes
    }

    /// The text the first pass returns (its `FirstPassOutput.stats`).
    public var text: String {
        "#av1-first-pass seconds=\(seconds) " + bytes.keys.sorted().map { "crf\($0)=\(bytes[$0]!)" }.joined(separator: " ")
    }

    public init(parsing text: String) throws(TwoPassError) {
        let words = text.split(whereSeparator: \.isWhitespace)
        guard words.first == "#av1-first-pass" else { throw .stats("not an AV1 first pass") }
        var seconds: Double?
        var bytes: [Int: Int] = [:]
        for word in words.dropFirst() {
            let pair = word.split(separator: "=")
            guard pair.count == 2 else { throw .stats("a field it cannot read: \(word.prefix(40))") }
            if pair[0] == "seconds" {
                seconds = Double(pair[1])
            } else if pair[0].hasPrefix("crf"), let crf = Int(pair[0].dropFirst(3)), let size = Int(pair[1]), size > 0 {
                bytes[crf] = size
            } else {
                throw .stats("a field it cannot read: \(word.prefix(40))")
            }
        }
        guard let seconds, seconds > 0 else { throw .stats("no duration") }
        guard bytes.count >= 2 else { throw .stats("sizes at fewer than two CRFs") }
        self.seconds = seconds
        self.bytes = bytes
    }

    /// Predicted bytes at `crf`: log-linear through the nearest two measured CRFs (beyond them, their slope).
    public func predictedBytes(atCRF crf: Double) -> Double {
        let known = bytes.keys.sorted()
        var lo = known[0], hi = known[1]
        for (a, b) in zip(known, known.dropFirst()) where Double(a) <= crf { lo = a; hi = b }
        let la = log(Double(bytes[lo]!)), lb = log(Double(bytes[hi]!))
        return exp(la + (crf - Double(lo)) * (lb - la) / Double(hi - lo))
    }

    /// Bits per second predicted at a whole `crf`: what the allocation gives the segment's second pass.
    public func bitrate(atCRF crf: Int) -> Int {
        Int((predictedBytes(atCRF: Double(crf)) * 8 / seconds).rounded())
    }

    /// The whole CRF whose predicted bitrate is nearest `bitrate`: the second pass's CRF from its allocated rate.
    public func crf(forBitrate bitrate: Int) -> Int {
        let wanted = log(Double(max(1, bitrate)))
        func distance(_ crf: Int) -> Double { abs(log(Double(max(1, self.bitrate(atCRF: crf)))) - wanted) }
        let range = VideoCodec.av1.crfRange
        return (Int(range.lowerBound)...Int(range.upperBound)).min { distance($0) < distance($1) }!
    }
}

extension BitAllocation {
    /// AV1's allocation: one quality for the whole file, found so that the predicted bytes fill the budget. CRFs are
    /// whole numbers, so each segment takes the CRF on either side of that quality: the lower (larger) one given to
    /// segments, largest step first, where it brings the total nearer the budget. `rateFactor` is the fractional CRF.
    public static func allocate(av1 segments: [AV1FirstPass], bitrate: Int) throws(TwoPassError) -> Result {
        guard !segments.isEmpty else { throw .budget("no segments") }
        let seconds = segments.reduce(0) { $0 + $1.seconds }
        guard seconds > 0, bitrate > 0 else { throw .budget("no duration or no bitrate") }
        let available = Double(bitrate) * seconds / 8
        let range = VideoCodec.av1.crfRange
        func total(_ crf: Double) -> Double { segments.reduce(0) { $0 + $1.predictedBytes(atCRF: crf) } }
        let least = total(range.upperBound)
        guard least <= available * 1.1 else {
            throw .budget("\(bitrate) b/s is below what SVT-AV1 makes at its highest CRF (about \(Int(least * 8 / seconds)) b/s)")
        }
        // Bytes fall as the CRF rises: bisect.
        var lo = range.lowerBound, hi = range.upperBound
        for _ in 0..<60 {
            let mid = (lo + hi) / 2
            if total(mid) > available { lo = mid } else { hi = mid }
        }
        let quality = (lo + hi) / 2
        let coarse = Int(min(range.upperBound, quality.rounded(.up)))
        let fine = Int(max(range.lowerBound, Double(coarse - 1)))
        var crfs = [Int](repeating: coarse, count: segments.count)
        var bytes = segments.map { $0.predictedBytes(atCRF: Double(coarse)) }
        var sum = bytes.reduce(0, +)
        // The largest steps first, the smaller ones then come nearer.
        let finer = segments.map { $0.predictedBytes(atCRF: Double(fine)) }
        let steps = zip(finer, bytes).map { $0 - $1 }
        let order = segments.indices.sorted { steps[$0] != steps[$1] ? steps[$0] > steps[$1] : $0 < $1 }
        for k in order where coarse != fine {
            let next = sum - bytes[k] + finer[k]
            guard abs(next - available) < abs(sum - available) else { continue }
            crfs[k] = fine
            bytes[k] = finer[k]
            sum = next
        }
        let bitrates = zip(segments, crfs).map { $0.bitrate(atCRF: $1) }
        return Result(rateFactor: quality, budgets: bytes.map { $0 * 8 }, bitrates: bitrates)
    }
}
