/// Display times for video packets the demuxer gave no pts: MPEG program streams write one only for the first
/// picture starting in a PES packet, AVI none for reference pictures shown after B-frames. A decoder shows such
/// pictures anyway; the probe asks one in which order (`displayOrder`) and this gives each its time.
public enum PresentationTimes {
    /// `packets` in decode order, with pts filled in (and `ptsInferred` set) for every packet in `displayOrder`
    /// (packet indices in the order a decoder showed their pictures) that had none. The k-th picture shown is given
    /// the k-th decode time plus the offset most pictures with a pts have between the two (the MPEG timing model:
    /// a reference picture shows when the next one decodes); where that does not rise between the pictures that
    /// have one, times are spaced evenly between them. Throws when neither makes the times rise.
    public static func fill(_ packets: [PacketInfo], displayOrder: [Int]) throws(PlanError) -> [PacketInfo] {
        let missing = displayOrder.filter { packets[$0].pts == nil }
        guard !missing.isEmpty else { return packets }
        var out = packets
        let known = displayOrder.map { packets[$0].pts }
        for times in [fromDecodeTimes(packets, displayOrder: displayOrder), spacedBetween(known)] {
            guard let times, rises(times) else { continue }
            for (k, index) in displayOrder.enumerated() where packets[index].pts == nil {
                out[index].pts = times[k]
                out[index].ptsInferred = true
            }
            return out
        }
        throw .missingTimestamps(missing.count)
    }

    /// The k-th shown picture at the k-th decode time plus the usual offset (0 when no picture has a pts); nil
    /// when a packet lacks a dts.
    static func fromDecodeTimes(_ packets: [PacketInfo], displayOrder: [Int]) -> [Int64]? {
        let decodeTimes = packets.compactMap(\.dts)
        guard decodeTimes.count == packets.count, displayOrder.count <= decodeTimes.count else { return nil }
        let sorted = decodeTimes.sorted()
        var offsets: [Int64: Int] = [:]
        for (k, index) in displayOrder.enumerated() {
            if let pts = packets[index].pts { offsets[pts - sorted[k], default: 0] += 1 }
        }
        let offset = offsets.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key ?? 0
        return displayOrder.enumerated().map { k, index in packets[index].pts ?? sorted[k] + offset }
    }

    /// Missing times spaced evenly between the known ones around them, and at the usual step before the first
    /// and after the last; nil when fewer than two are known.
    static func spacedBetween(_ known: [Int64?]) -> [Int64]? {
        let anchors = known.indices.filter { known[$0] != nil }
        guard anchors.count >= 2, let step = PictureSteps.usual(anchors.map { known[$0]! }.sorted()).map({ max(1, $0) })
        else { return nil }
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
