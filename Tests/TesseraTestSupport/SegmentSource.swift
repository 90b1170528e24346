import FFmpegKit
import TesseraCore
@testable import TesseraEngine

/// Reads the input once, in demux order, and hands out each planned segment as a self-contained task as
/// soon as its last packet has been read. Segments whose pre-roll overlaps share packets. The tests'
/// sequential reference for `SegmentReader`, which reads any one segment on demand.
package final class SegmentSource {
    package let plan: JobPlan
    package let input: MediaInput

    package init(plan: JobPlan) throws(TesseraError) {
        TestLogging.configured
        self.plan = plan
        input = try plan.reopenInput()
    }

    /// Calls `body` with each segment's task, in order of their last packet. `body` may block (back-pressure).
    package func forEachTask(_ body: (SegmentTask) throws(TesseraError) -> Void) throws(TesseraError) {
        let segments = plan.cuts.segments
        let runOuts = segments.map(plan.runOut(after:))
        let lastShipped = segments.indices.map { segments[$0].lastShippedPacket(runOuts[$0]) }
        let videoIndex = plan.probe.video.index
        let expected = plan.probe.packets
        var nextToOpen = 0
        var active: [Int: [MediaPacket]] = [:]
        var emitted = 0
        var packetIndex = 0
        let packet = Packet()
        do {
            while emitted < segments.count, try input.read(into: packet) {
                guard packet.streamIndex == videoIndex else { continue }
                defer { packetIndex += 1 }
                let i = packetIndex
                guard i < expected.count, expected[i].demuxedPTS == packet.pts, expected[i].dts == packet.dts else {
                    throw TesseraError.input(plan.inputPath, "packet \(i) differs from the probe (file changed while transcoding?)")
                }
                if expected[i].ptsInferred { packet.pts = expected[i].pts }
                while nextToOpen < segments.count, segments[nextToOpen].firstPacket <= i {
                    active[nextToOpen] = []
                    nextToOpen += 1
                }
                guard !active.isEmpty else { continue }
                let media = packet.mediaPacket
                for k in active.keys.sorted() {
                    active[k]!.append(media)
                    if lastShipped[k] == i {
                        try body(plan.task(segments[k], runOuts[k], packets: active.removeValue(forKey: k)!))
                        emitted += 1
                    }
                }
            }
        } catch let error as TesseraError {
            throw error
        } catch {
            throw .input(plan.inputPath, "read error at video packet \(packetIndex) (\(error))")
        }
        guard emitted == segments.count else {
            throw .input(plan.inputPath, "ended after \(packetIndex) video packets, \(expected.count) were probed (file changed?)")
        }
    }
}
