import FFmpegKit
import Foundation
import TesseraCore

/// Reads a segment's packets straight from the input file into its payload, at the positions the probe
/// recorded, for containers that store each packet's bytes whole at its position (MP4 and QuickTime), and
/// raw elementary streams (`.h264`, `.hevc`), whose packets tile the file: one copy from the page cache
/// instead of the demuxer's read, its packet buffer and a copy out of it. A raw stream cannot be sought by
/// time, so without it every segment would be read from the file's start.
///
/// Used only when it gives exactly the demuxer's bytes: every packet has a position, and the first
/// packets of the file, read both ways when the reader opens, are byte for byte the same. A payload is
/// read this way only while the file still has the size and modification time it had when probed;
/// otherwise (or on any read error) the caller reads through the demuxer, which reports what changed.
final class DirectPackets {
    let path: String
    let stamp: FileStamp
    let fd: Int32

    /// Packets compared both ways when the reader opens.
    static let checkedPackets = 8

    init?(plan: JobPlan, input: MediaInput, packet: Packet) {
        let probe = plan.probe
        guard probe.formatName.hasPrefix("mov,") || Self.tilesTheFile(probe), let stamp = probe.stamp,
              stamp == FileStamp(plan.inputPath), probe.packets.allSatisfy({ $0.position != nil }) else { return nil }
        let fd = open(plan.inputPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        self.path = plan.inputPath
        self.stamp = stamp
        self.fd = fd
        guard Self.agreesWithDemuxer(probe, input, packet, read: { position, size in
            var bytes = [UInt8](repeating: 0, count: size)
            return bytes.withUnsafeMutableBytes({ readFully(fd, into: $0, at: position) }) ? bytes : nil
        }) else {
            close(fd)
            return nil
        }
    }

    deinit { close(fd) }

    /// The video packets, one after another, are the whole file (a raw elementary stream split by its parser).
    static func tilesTheFile(_ probe: ProbeResult) -> Bool {
        guard probe.streams.count == 1, let size = probe.stamp?.size else { return false }
        var end: Int64 = 0
        for p in probe.packets {
            guard p.position == end else { return false }
            end += Int64(p.size)
        }
        return end == size
    }

    /// The first packets through the demuxer and read at their positions by `read`: the same sizes, flags and
    /// bytes. Shared with `ObjectPackets`, which reads them from object storage.
    static func agreesWithDemuxer(_ probe: ProbeResult, _ input: MediaInput, _ packet: Packet,
                                  read: (_ position: Int64, _ size: Int) -> [UInt8]?) -> Bool {
        do {
            try input.seekToStart()
            var index = 0
            while index < min(Self.checkedPackets, probe.packets.count), try input.read(into: packet) {
                guard packet.streamIndex == probe.video.index else { continue }
                let probed = probe.packets[index]
                // Not the timestamps: the payload takes the probe's, and a demuxer may count them anew after a seek
                // to the start (AVI's first packet comes back at 1).
                guard let position = probed.position, probed.size == packet.size, probed.mediaFlags == packet.mediaFlags,
                      let bytes = read(position, probed.size), packet.withData({ $0.elementsEqual(bytes) }) else { return false }
                index += 1
            }
            return index == min(Self.checkedPackets, probe.packets.count)
        } catch {
            return false
        }
    }

    /// The payload blob of `packets`, read in place; nil when the file changed or a read fell short.
    func payload(header: [UInt8], packets: ArraySlice<PacketInfo>, dataBytes: Int) -> [UInt8]? {
        guard FileStamp(path) == stamp else { return nil }
        return SegmentTask.write(header: header, packets: packets.count, dataBytes: dataBytes) { put in
            for p in packets {
                guard let position = p.position else { return false }
                put(p.pts, p.dts, p.duration, p.mediaFlags, p.size) { readFully(fd, into: $0, at: position) }
            }
            return true
        }
    }
}
