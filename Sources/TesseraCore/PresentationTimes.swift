/// Display times for video packets the demuxer gave no pts: MPEG program streams write one only for the first
/// picture starting in a PES packet, AVI none for reference pictures shown after B-frames, a raw elementary stream
/// (`.h264`, `.hevc`) none at all. A decoder shows such pictures anyway; the probe asks one in which order
/// (`displayOrder`) and this gives each its time.
public enum PresentationTimes {
    /// `packets` in decode order, with pts filled in (and `ptsInferred` set) for every packet in `displayOrder`
    /// (packet indices in the order a decoder showed their pictures) that had none. The k-th picture shown is given
    /// the k-th of the shown pictures' decode times plus the offset every timed picture has between the two (the MPEG
    /// timing model: a reference picture shows when the next one decodes); where they do not share one, or decode
    /// times are missing, times are spaced evenly between the timed pictures; where no picture has either time, one
    /// `step` apart from 0 (ffmpeg's reading of a raw stream). Throws when none makes them rise.
    public static func fill(_ packets: [PacketInfo], displayOrder: [Int], step: Int64? = nil) throws(PlanError) -> [PacketInfo] {
        var seen = Set<Int>()
        let order = displayOrder.filter { packets.indices.contains($0) && seen.insert($0).inserted }
        let missing = order.filter { packets[$0].pts == nil }
        guard !missing.isEmpty else { return packets }
        var out = packets
        let untimed = packets.allSatisfy { $0.pts == nil && $0.dts == nil }
        let stepped = step.flatMap { step in untimed && step > 0 ? order.indices.map { Int64($0) * step } : nil }
        for times in [fromDecodeTimes(packets, displayOrder: order), spacedBetween(order.map { packets[$0].pts }), stepped] {
            guard let times, rises(times) else { continue }
            for (k, index) in order.enumerated() where packets[index].pts == nil {
                out[index].pts = times[k]
                out[index].ptsInferred = true
            }
            return out
        }
        throw .missingTimestamps(missing.count)
    }

    /// The k-th shown picture at the k-th of the shown pictures' decode times plus the offset every timed one has
    /// (0 when none is timed); nil when a shown packet lacks a dts or the timed ones disagree.
    static func fromDecodeTimes(_ packets: [PacketInfo], displayOrder: [Int]) -> [Int64]? {
        let decodeTimes = displayOrder.compactMap { packets[$0].dts }
        guard decodeTimes.count == displayOrder.count else { return nil }
        let sorted = decodeTimes.sorted()
        let offsets = Set(displayOrder.enumerated().compactMap { k, index in packets[index].pts.map { $0 - sorted[k] } })
        guard offsets.count <= 1 else { return nil }
        let offset = offsets.first ?? 0
        return displayOrder.enumerated().map { k, index in packets[index].pts ?? sorted[k] + offset }
    }

    /// Missing times spaced evenly between the known ones around them, and before the first and after the last at
    /// the usual step per picture between known ones; nil when fewer than two are known.
    static func spacedBetween(_ known: [Int64?]) -> [Int64]? {
        let anchors = known.indices.filter { known[$0] != nil }
        guard anchors.count >= 2 else { return nil }
        let perPicture = zip(anchors, anchors.dropFirst()).map { a, b in (known[b]! - known[a]!) / Int64(b - a) }.sorted()
        let step = max(1, perPicture[perPicture.count / 2])
        var times = known.map { $0 ?? 0 }
        for k in known.indices where known[k] == nil {
            let before = anchors.last { $0 < k }, after = anchors.first { $0 > k }
            switch (before, after) {
            case let (b?, a?):
                times[k] = known[b]! + (known[a]! - known[b]!) * Int64(k - b) / Int64(a - b)
            case let (b?, nil):
                times[k] = known[b]! + step * Int64(k - b)
            case let (nil, a?):
                times[k] = known[a]! - step * Int64(a - k)
            default:
                return nil
            }
        }
        return times
    }

    static func rises(_ times: [Int64]) -> Bool {
        zip(times, times.dropFirst()).allSatisfy { $0 < $1 }
    }
}
