import FFmpegKit
import TesseraCore

/// Where a read landed in the probe's packet list, from the first video packet read after a seek or a reopen: the
/// probe's first packet when read back to the start (known even without a timestamp, as in a raw stream), else the
/// probe entries with its pts, dts and size. The segment reader and the scene analysis both ask it.
struct PacketLanding {
    /// Probe entries (decode-order indices) by how the demuxer gives them.
    let entries: [SegmentReader.Key: [Int]]
    let first: SegmentReader.Key?

    init(_ packets: [PacketInfo]) {
        entries = Dictionary(grouping: packets.indices) { SegmentReader.Key(packets[$0]) }
        first = packets.first.map(SegmentReader.Key.init)
    }

    /// The probe index of `packet`, or nil when it cannot tell (read on). `atStart`: the input was just read back to
    /// its start. Of several matching entries, the earliest not past `limit`, else the earliest. A packet with neither
    /// timestamp is known by its size alone, which is not enough (H.264 in a program stream), unless at the start.
    /// One whose times after a seek are not those it had when opened (AVI counts anew; a raw MPEG-4 stream times
    /// packets as it reads them) is matched by its times, or not at all.
    func index(of packet: Packet, atStart: Bool, notPast limit: Int = .max) -> Int? {
        let key = SegmentReader.Key(packet)
        if atStart, key == first { return 0 }
        guard packet.pts != nil || packet.dts != nil, let candidates = entries[key] else { return nil }
        return candidates.first { $0 <= limit } ?? candidates.first
    }
}
