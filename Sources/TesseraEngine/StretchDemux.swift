import FFmpegKit
import TesseraCore

/// An MPEG-TS or MXF task's packets demuxed from the object by the worker: libavformat reads the head (the
/// program tables or header partition, no search for stream information), jumps to the stretch's first byte and
/// reads the video stream from there (both resynchronise on their own framing: a transport packet's sync byte,
/// a KLV key). What it finds must be the task's packets in order, each of the probed size and key flag, the
/// first also at the probed presentation time (modulo the transport's 33-bit wrap): a stretch that starts inside
/// a packet yields its tail first, which is passed over, and the first packet may come with a start code's
/// leading zero byte, which is cut off.
enum StretchDemux {
    /// The demuxers whose tasks are read this way (libavformat's names).
    static let formats: Set<String> = ["mpegts", "mxf"]

    /// One expected packet: the probe's view of it.
    struct Expected {
        var pts: Int64?
        var size: Int
        var key: Bool
    }

    /// Packets passed over before the first expected one; more means the stretch is not where the probe said.
    static let longestLeadIn = 16

    /// The expected packets' bytes, in order; nil when the stretch does not hold them as probed.
    static func packets(from source: any RandomAccessBytes, name: String, stretch: DemuxedStretch,
                        expected: [Expected]) throws -> [[UInt8]]? {
        let input = try MediaInput(source: source, name: name, searchesStreams: false)
        guard let stream = input.streams.first(where: { $0.kind == .video && $0.containerID == stretch.stream }) else { return nil }
        input.readOnly(stream: stream.index)
        try input.seek(toByte: stretch.bytes.lowerBound + (try syncOffset(source, at: stretch.bytes.lowerBound)))
        let packet = Packet()
        var found: [[UInt8]] = []
        var passedOver = 0
        while found.count < expected.count, try input.read(into: packet) {
            guard packet.streamIndex == stream.index else { continue }
            let want = expected[found.count]
            if found.isEmpty, packet.isKey == want.key, samePresentation(packet.pts, want.pts),
               let bytes = packet.withData({ withoutLeadingZeros($0, to: want.size) }) {
                found.append(bytes)
            } else if !found.isEmpty, packet.size == want.size, packet.isKey == want.key {
                found.append(packet.withData { Array($0) })
            } else {
                passedOver += 1
                guard found.isEmpty, passedOver <= longestLeadIn else { return nil }
            }
        }
        return found.count == expected.count ? found : nil
    }

    /// Where the transport packet at `position` has its sync byte: at it (188-byte packets), or after the 4-byte
    /// timestamp of a 192-byte M2TS packet (which the demuxer, seeking to the timestamp, would take for lost sync
    /// and resynchronise one packet late).
    static func syncOffset(_ source: any RandomAccessBytes, at position: Int64) throws -> Int64 {
        var head = [UInt8](repeating: 0, count: 197)
        var got = 0
        while got < head.count {
            let n = try head.withUnsafeMutableBytes { try source.read(at: position + Int64(got), into: UnsafeMutableRawBufferPointer(rebasing: $0[got...])) }
            guard n > 0 else { break }
            got += n
        }
        guard got == head.count, !(head[0] == 0x47 && head[188] == 0x47) else { return 0 }
        return head[4] == 0x47 && head[196] == 0x47 ? 4 : 0
    }

    /// The first packet's bytes at `size`: a parser that starts mid-stream gives it the zero byte that a four-byte
    /// start code puts before it, which a parser that read on from the previous packet left at that packet's end.
    static func withoutLeadingZeros(_ data: UnsafeRawBufferPointer, to size: Int) -> [UInt8]? {
        let extra = data.count - size
        guard (0...3).contains(extra), data.prefix(extra).allSatisfy({ $0 == 0 }) else { return nil }
        return Array(data.dropFirst(extra))
    }

    /// Equal timestamps, modulo the transport's 33-bit wrap (a demuxer that starts mid-file unwraps differently).
    static func samePresentation(_ a: Int64?, _ b: Int64?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return (a &- b) & ((1 << 33) - 1) == 0
    }
}
