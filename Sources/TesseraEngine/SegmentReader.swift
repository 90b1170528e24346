import FFmpegKit
import Foundation
import TesseraCore

/// Reads any one segment's packets on demand: seeks near its first packet, finds where it landed by
/// matching packets against the probe (pts, dts, size), and reads through the segment's last packet.
/// Memory stays bounded by one segment, in any order, whatever the input's length.
public final class SegmentReader {
    let plan: JobPlan
    private(set) var input: MediaInput
    let packet = Packet()
    /// Recognises a packet after a seek.
    let landing: PacketLanding
    /// Segments that needed a read from the start of the file because no seek landed before them.
    public private(set) var readsFromStart = 0
    /// The input opened for reading packets at their probed positions, when that gives the demuxer's
    /// bytes (see `DirectPackets`); nil: every payload goes through the demuxer.
    let direct: DirectPackets?
    /// Tasks for workers that read their own bytes from object storage, when the input allows (see
    /// `ObjectPackets`); nil: every payload carries its packets.
    private(set) var object: ObjectPackets?
    /// Source bytes that payloads carried so far (none for tasks whose workers read their own).
    public private(set) var shippedSourceBytes: Int64 = 0
    /// The input was just read back to its start: its first video packet is the probe's first, even without a
    /// timestamp to recognise it by (a raw elementary stream).
    var atStart = false

    struct Key: Hashable {
        var pts: Int64?
        var dts: Int64?
        var size: Int

        /// How the demuxer reads the probed packet `p`.
        init(_ p: PacketInfo) { (pts, dts, size) = (p.demuxedPTS, p.dts, p.size) }
        /// How the demuxer gave `packet`.
        init(_ packet: Packet) { (pts, dts, size) = (packet.pts, packet.dts, packet.size) }
    }

    /// `urlSeconds`: an `s3://` input's tasks may name their byte ranges under URLs presigned for that long,
    /// instead of carrying the bytes (`payload(for:workerReads:)`); nil: they always carry them.
    public init(plan: JobPlan, urlSeconds: Int? = nil) throws(TesseraError) {
        self.plan = plan
        input = try plan.reopenInput(headerOnly: true)
        landing = PacketLanding(plan.probe.packets)
        direct = DirectPackets(plan: plan, input: input, packet: packet)
        let (input, packet) = (input, packet)  // locals: the closure below may not capture a half-initialised self
        object = urlSeconds.flatMap { ObjectPackets(plan: plan, input: input, packet: packet, urlSeconds: $0) }
    }

    /// Whether payloads may leave the packets' bytes to workers that read them.
    public var readsByWorkers: Bool { object != nil }

    /// From now on every payload carries its packets: a worker found its bytes not as the probe said.
    public func stopWorkerReads() {
        object = nil
    }

    /// Segment `segment`'s payload as a value (run-out included).
    public func task(for segment: PlannedSegment) throws(TesseraError) -> SegmentTask {
        let runOut = plan.runOut(after: segment)
        let last = segment.lastShippedPacket(runOut)
        return try read(segment) { () throws -> SegmentTask? in
            var packets: [MediaPacket] = []
            packets.reserveCapacity(segment.shippedPackets(runOut))
            guard try readSegment(segment, through: last, { packets.append($0.mediaPacket) }) else { return nil }
            return plan.task(segment, runOut, packets: packets)
        }
    }

    /// Segment `segment`'s serialized payload, the bytes `task(for:).serialized()` gives, written
    /// straight from the demuxer's buffers into one allocation sized from the probe: what the
    /// coordinator sends. `workerReads`: the `SourceRanges` version the worker reads (0: none); the payload leaves
    /// the bytes out where the input and that version allow (`ObjectPackets`).
    public func payload(for segment: PlannedSegment, workerReads: Int = 0) throws(TesseraError) -> [UInt8] {
        let runOut = plan.runOut(after: segment)
        let last = segment.lastShippedPacket(runOut)
        let task = plan.task(segment, runOut, packets: [])
        let shipped = plan.probe.packets[segment.firstPacket...last]
        if let object, workerReads >= object.versionNeeded, let bytes = object.payload(header: task.header, packets: shipped) { return bytes }
        let header = CanonicalJSON.data(task.header)
        let dataBytes = shipped.reduce(0) { $0 + $1.size }
        shippedSourceBytes += Int64(dataBytes)
        if let direct, let bytes = direct.payload(header: header, packets: shipped, dataBytes: dataBytes) { return bytes }
        return try read(segment) { () throws -> [UInt8]? in
            try SegmentTask.write(header: header, packets: shipped.count, dataBytes: dataBytes) { put in
                try readSegment(segment, through: last) { p in
                    p.withData { data in put(p.pts, p.dts, p.duration, p.mediaFlags, data.count) { $0.copyMemory(from: data); return true } }
                }
            }
        }
    }

    /// Seeks near the segment and runs `attempt`, which reads from there and returns nil when it landed
    /// after the segment's first packet: by decode time, earlier on each retry, then from the start.
    func read<R>(_ segment: PlannedSegment, _ attempt: () throws -> R?) throws(TesseraError) -> R {
        // An object replaced in S3 fails its pinned reads: said as such, whatever the read made of it.
        do { return try seekAndRead(segment, attempt) } catch {
            throw TesseraError.sourceFailure(input) ?? error
        }
    }

    func seekAndRead<R>(_ segment: PlannedSegment, _ attempt: () throws -> R?) throws(TesseraError) -> R {
        let stream = plan.probe.video.index
        let tb = plan.probe.video.timeBase
        let margins: [Double] = [0, 2, 10, 60]
        let anchor = plan.probe.packets.seekTime(forPacket: segment.firstPacket)
        for margin in margins {
            guard let anchor else { break }
            let target = anchor - Int64(margin / tb.doubleValue)
            do {
                try input.seek(stream: stream, toOrBefore: target)
                atStart = false
                if let result = try attempt() { return result }
            } catch let error as TesseraError {
                throw error
            } catch {
                continue
            }
        }
        readsFromStart += 1
        do {
            try input.seekToStart()
            atStart = true
            if let result = try attempt() { return result }
        } catch let error as TesseraError {
            throw error
        } catch {}
        // A demuxer that finds nothing after any seek (image2's pictures): the input opened again, read from its start.
        do {
            input = try plan.reopenInput(headerOnly: true)
            atStart = true
            if let result = try attempt() { return result }
        } catch let error as TesseraError {
            throw error
        } catch {
            throw .input(plan.inputPath, "read error (\(error))")
        }
        throw .input(plan.inputPath, "cannot find segment \(segment.index)'s packets (file changed since the probe?)")
    }

    /// Reads from the current position through packet `last`, handing each of the segment's packets to
    /// `body`; false when it landed after the segment's first packet.
    func readSegment(_ segment: PlannedSegment, through last: Int, _ body: (Packet) throws -> Void) throws -> Bool {
        let probed = plan.probe.packets
        let stream = plan.probe.video.index
        var index: Int?
        while try input.read(into: packet) {
            guard packet.streamIndex == stream else { continue }
            if let i = index {
                index = i + 1
            } else {
                // Where did we land? Not knowing, read on; past the segment's start, look elsewhere (a fresh open).
                let found = landing.index(of: packet, atStart: atStart, notPast: segment.firstPacket)
                atStart = false
                guard let at = found else { continue }
                if at > segment.firstPacket { return false }
                index = at
            }
            let i = index!
            guard i < probed.count, Key(probed[i]) == Key(packet) else {
                throw TesseraError.input(plan.inputPath, "packet \(i) differs from the probe (file changed while transcoding?)")
            }
            // A picture the demuxer gave no pts goes to the worker at the time the probe worked out for it.
            if probed[i].ptsInferred { packet.pts = probed[i].pts }
            if i >= segment.firstPacket { try body(packet) }
            if i == last { return true }
        }
        // Nothing of the segment after the seek (an image demuxer seeks past its only picture): looked for elsewhere.
        if index == nil { return false }
        throw TesseraError.input(plan.inputPath, "ended before segment \(segment.index)'s last packet (file changed?)")
    }
}
