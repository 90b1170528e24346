import FFmpegKit
import TesseraCore

/// Reads any one segment's packets on demand: seeks near its first packet, finds where it landed by
/// matching packets against the probe (pts, dts, size), and reads through the segment's last packet.
/// Memory stays bounded by one segment, in any order, whatever the input's length.
public final class SegmentReader {
    let plan: JobPlan
    let input: MediaInput
    let packet = Packet()
    /// Probe entries by (pts, dts, size), to recognise a packet after a seek.
    let lookup: [Key: [Int]]
    /// Segments that needed a read from the start of the file because no seek landed before them.
    public private(set) var readsFromStart = 0

    struct Key: Hashable {
        var pts: Int64?
        var dts: Int64?
        var size: Int
    }

    public init(plan: JobPlan) throws(TesseraError) {
        self.plan = plan
        input = try plan.reopenInput()
        var lookup: [Key: [Int]] = [:]
        for p in plan.probe.packets { lookup[Key(pts: p.pts, dts: p.dts, size: p.size), default: []].append(p.index) }
        self.lookup = lookup
    }

    public func task(for segment: PlannedSegment) throws(TesseraError) -> SegmentTask {
        let runOut = plan.runOut(after: segment)
        let last = plan.lastShippedPacket(segment, runOut)
        let probed = plan.probe.packets
        let stream = plan.probe.video.index
        let first = probed[segment.firstPacket]
        // Seek by decode time, earlier on each retry; then from the start as the last resort.
        let tb = plan.probe.video.timeBase
        let margins: [Double] = [0, 2, 10, 60]
        for margin in margins {
            guard let anchor = first.dts ?? first.pts else { break }
            let target = anchor - Int64(margin / tb.doubleValue)
            do {
                try input.seek(stream: stream, toOrBefore: target)
                if let packets = try readSegment(segment, through: last, stream: stream) { return plan.task(segment, runOut, packets: packets) }
            } catch let error as TesseraError {
                throw error
            } catch {
                continue
            }
        }
        readsFromStart += 1
        do {
            try input.seekToStart()
            if let packets = try readSegment(segment, through: last, stream: stream) { return plan.task(segment, runOut, packets: packets) }
        } catch let error as TesseraError {
            throw error
        } catch {
            throw .input(plan.inputPath, "read error (\(error))")
        }
        throw .input(plan.inputPath, "cannot find segment \(segment.index)'s packets (file changed since the probe?)")
    }

    /// Reads from the current position through packet `last`; nil when it landed after the segment's first packet.
    func readSegment(_ segment: PlannedSegment, through last: Int, stream: Int) throws -> [MediaPacket]? {
        let probed = plan.probe.packets
        var index: Int?
        var out: [MediaPacket] = []
        out.reserveCapacity(last - segment.firstPacket + 1)
        while try input.read(into: packet) {
            guard packet.streamIndex == stream else { continue }
            if let i = index {
                index = i + 1
            } else {
                // Where did we land? Take the earliest probe entry that matches and is not past the segment.
                let candidates = lookup[Key(pts: packet.pts, dts: packet.dts, size: packet.size)] ?? []
                guard let at = candidates.first(where: { $0 <= segment.firstPacket }) ?? candidates.first else { continue }
                if at > segment.firstPacket { return nil }
                index = at
            }
            let i = index!
            guard i < probed.count, probed[i].pts == packet.pts, probed[i].dts == packet.dts else {
                throw TesseraError.input(plan.inputPath, "packet \(i) differs from the probe (file changed while transcoding?)")
            }
            if i >= segment.firstPacket { out.append(packet.mediaPacket) }
            if i == last { return out }
        }
        throw TesseraError.input(plan.inputPath, "ended before segment \(segment.index)'s last packet (file changed?)")
    }
}
