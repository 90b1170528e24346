/// Decode timestamps for an encoder's packets. libx265 derives its first packets' dts from a delay it measures
/// over its B-frame depth of frames; a segment with fewer frames than that gets dts from memory it never set
/// (seen: 6.5 × 10^18 against a pts of 0), which no muxer can order.
public enum DecodeTimestamps {
    /// `packets` (decode order) as given when their dts can be right: each present, at most its pts, rising, and
    /// no further before the first picture than twice the pictures' span. Else each packet's dts becomes the
    /// pts shown at its place in decode order, all shifted back by the deepest reordering, as a muxer derives them.
    public static func ordered(_ packets: [MediaPacket]) -> [MediaPacket] {
        let pts = packets.compactMap(\.pts)
        guard !pts.isEmpty, pts.count == packets.count else { return packets }
        let sorted = pts.sorted()
        let earliest = sorted[0] - 2 * max(1, sorted[sorted.count - 1] - sorted[0])
        var last = Int64.min, plausible = true
        for packet in packets {
            guard let dts = packet.dts, dts <= packet.pts!, dts > last, dts >= earliest else { plausible = false; break }
            last = dts
        }
        if plausible { return packets }
        let shift = zip(sorted, pts).map { $0 - $1 }.max()!
        return zip(packets, sorted).map { packet, shown in
            var packet = packet
            packet.dts = shown - shift
            return packet
        }
    }
}
