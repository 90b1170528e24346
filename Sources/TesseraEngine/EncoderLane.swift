import FFmpegKit
import TesseraCore

/// One output of a segment's encode: its picture pipeline and libx264 encoder, fed the kept frames (and the
/// lead-in and run-out ones it is shown only), and the packets it made. A ladder task runs one per rung over
/// one decode.
final class EncoderLane {
    let output: VideoOutputFormat
    let encoder: Encoder
    let picture: PicturePipeline
    let ticks: Range<Int64>
    let leadIn: Int
    /// Output ticks to make IDRs at (a ladder's packaging cuts).
    let forced: Set<Int64>
    /// With a run-out the flush stops at the last kept packet: run-out frames are never encoded.
    let stopsAtLastKept: Bool
    let segment: Int
    /// The source's time base, which kept frames' pts count in.
    let sourceTimeBase: Rational
    private let encoded = Packet()
    var out: [MediaPacket] = []
    /// Frames sent to be kept.
    private(set) var sent = 0
    /// Constant frame rate: the frame on screen, and the next output tick to fill.
    private var held: Frame?
    private var nextTick: Int64
    private var flushing = false

    init(_ output: VideoOutputFormat, config: VideoEncoderConfig, ticks: Range<Int64>, leadIn: Int, forced: Set<Int64>,
         stopsAtLastKept: Bool, segment: Int, sourceTimeBase: Rational) throws {
        self.output = output
        encoder = try Encoder(video: config)
        picture = try PicturePipeline(output)
        self.ticks = ticks
        self.leadIn = leadIn
        self.forced = forced
        self.stopsAtLastKept = stopsAtLastKept
        self.segment = segment
        self.sourceTimeBase = sourceTimeBase
        nextTick = ticks.lowerBound
        out.reserveCapacity(ticks.count)
    }

    var extradata: [UInt8] { encoder.extradata }

    /// The lead-in: flat frames one frame apart, ending just before the first tick.
    func sendLeadIn() throws {
        guard leadIn > 0 else { return }
        let grey = try Frame.midGrey(width: Int(output.width), height: Int(output.height), pixelFormat: output.pixelFormat)
        let step = output.frameDuration
        for n in 0..<leadIn {
            try send(grey, pts: ticks.lowerBound - Int64(leadIn - n) * step, kept: false)
        }
    }

    /// A frame in the segment's range; `endsGOP`: the last kept one, before a run-out.
    func keep(_ frame: Frame, pts: Int64, endsGOP: Bool, resamples: Bool) throws {
        let ready = try picture.prepare(frame)
        ready.clearPictureType()
        if endsGOP { ready.forcePredictedPicture() }
        if resamples {
            try fillTicks(until: pts)
            held = try Frame.reference(to: ready)
        } else {
            try send(ready, pts: pts)
        }
    }

    /// A run-out frame: shown to the encoder, never kept.
    func showRunOut(_ frame: Frame, pts: Int64) throws {
        let ready = try picture.prepare(frame)
        ready.clearPictureType()
        try send(ready, pts: pts, kept: false)
    }

    /// Fills the last ticks (resampling) and flushes the encoder.
    func finish(resamples: Bool, until end: Int64) throws {
        if resamples { try fillTicks(until: end) }
        flushing = true
        _ = try encoder.send(nil)
        try drain()
        out = DecodeTimestamps.ordered(out)
    }

    /// Shows the held frame at every tick before the source instant `until`.
    private func fillTicks(until: Int64) throws {
        let limit = min(ticks.upperBound, sourceTimeBase.rescaleUp(until, to: output.timeBase))
        guard nextTick < limit else { return }
        guard let held else { throw TesseraError(.segment, segment: segment, "no frame to show at tick \(nextTick)") }
        while nextTick < limit {
            try send(held, pts: nextTick)
            nextTick += 1
        }
    }

    private func send(_ picture: Frame, pts: Int64, kept: Bool = true) throws {
        picture.pts = pts
        // After a lead-in, the first kept frame is an IDR: nothing kept refers to a lead-in frame. So is every
        // packaging cut.
        let intra = kept && ((sent == 0 && leadIn > 0) || forced.contains(pts))
        if intra { picture.forceIntraPicture() }
        if kept { sent += 1 }
        while try encoder.send(picture) == .needsInput { try drain() }
        try drain()
        // A held frame is sent again for later ticks; a shared frame goes on to the next lane.
        if intra { picture.clearPictureType() }
    }

    private func drain() throws {
        while !(flushing && stopsAtLastKept && out.count == sent), try encoder.receive(encoded) == .ready {
            // Lead-in packets (before the first tick) and run-out ones (past the last) are dropped.
            if ticks.contains(encoded.pts ?? .min) { out.append(encoded.mediaPacket) }
            encoded.unref()
        }
    }
}
