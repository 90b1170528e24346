/// Frames past a segment's end that its worker decodes and shows the encoder without keeping them.
///
/// A segment encoded alone ends where x264's lookahead and MB-tree see no future: the last mini-GOP of
/// every segment came out about 0.5 dB below the same frames of a whole-file encode. Shown the frames
/// that follow, the encoder weighs those last frames as a whole-file encode does. The last kept frame is
/// forced to be a P picture, so that nothing kept refers to a run-out frame, and the run-out frames'
/// packets are dropped; the encoder is closed before it encodes them.
public struct RunOut: Codable, Hashable, Sendable {
    /// Packets shipped after the segment's last packet, in decode order.
    public var packets: Int
    /// Just past the last frame shown to the encoder (exclusive), in the source's time base.
    public var endPTS: Int64

    public init(packets: Int, endPTS: Int64) {
        self.packets = packets
        self.endPTS = endPTS
    }

    /// The deepest reordering an H.264 or HEVC stream may have: how far past a frame's display
    /// position its packet can come in decode order.
    static let reorderDepth = 16

    /// Fewer frames than one mini-GOP (3 B-frames and a P) tell the encoder nothing worth their packets.
    public static let minimumFrames = 4

    /// The run-out after `segment`: the `frames` frames shown right after its end, at most a quarter of
    /// the segment's own length, and the packets up to the last one of them in decode order. Nil for
    /// the last segment, and when fewer than `minimum` frames would be shown (short segments).
    public static func after(_ segment: PlannedSegment, packets probed: [PacketInfo], frames: Int,
                             minimum: Int = minimumFrames) -> RunOut? {
        let wanted = min(frames, segment.frameCount / 4)
        let from = segment.lastPacket + 1
        guard wanted > 0, wanted >= min(minimum, frames), from < probed.count else { return nil }
        let window = probed[from..<min(probed.count, from + wanted + reorderDepth)]
        func shown(_ p: PacketInfo) -> Int64? {
            guard !p.discard, let pts = p.pts, pts >= segment.endPTS else { return nil }
            return pts
        }
        guard let last = window.compactMap(shown).sorted().prefix(wanted).last else { return nil }
        let end = last + 1
        guard let lastIndex = window.last(where: { shown($0).map { $0 < end } ?? false })?.index else { return nil }
        return RunOut(packets: lastIndex - segment.lastPacket, endPTS: end)
    }
}

extension PlannedSegment {
    /// The decode-order index of the last packet the segment's payload carries: its own last packet,
    /// or its run-out's.
    public func lastShippedPacket(_ runOut: RunOut?) -> Int { lastPacket + (runOut?.packets ?? 0) }

    /// Packets the segment's payload carries: its own and its run-out's.
    public func shippedPackets(_ runOut: RunOut?) -> Int { lastShippedPacket(runOut) - firstPacket + 1 }
}
