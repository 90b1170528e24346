import CFFmpeg
import CTesseraShim
import TesseraCore

/// A decoder opened from codec parameters (a stream's, or a payload's).
public final class Decoder: CodecContext {
    /// Opens a decoder for a stream of `input`.
    public convenience init(input: MediaInput, streamIndex: Int, threads: Int = 1) throws(FFmpegError) {
        guard let stream = input.context?.pointee.streams[streamIndex] else {
            throw FFmpegError("no stream \(streamIndex)", call: "Decoder")
        }
        try self.init(parameters: stream.pointee.codecpar, timeBase: stream.pointee.time_base.rational, threads: threads)
    }

    /// Opens a decoder from the plain-Swift codec parameters that travel in a payload.
    public convenience init(parameters: CodecParameters, timeBase: Rational, threads: Int = 1) throws(FFmpegError) {
        guard let par = avcodec_parameters_alloc() else { throw FFmpegError(code: tessera_averror_enomem(), call: "avcodec_parameters_alloc") }
        var owned: UnsafeMutablePointer<AVCodecParameters>? = par
        defer { avcodec_parameters_free(&owned) }
        try parameters.apply(to: par)
        try self.init(parameters: par, timeBase: timeBase, threads: threads)
    }

    init(parameters par: UnsafeMutablePointer<AVCodecParameters>, timeBase: Rational, threads: Int) throws(FFmpegError) {
        guard let codec = avcodec_find_decoder(par.pointee.codec_id) else {
            throw FFmpegError("no decoder for \(cString(avcodec_get_name(par.pointee.codec_id)) ?? "this codec")", call: "avcodec_find_decoder")
        }
        try super.init(codec: codec)
        try check(avcodec_parameters_to_context(context, par), "avcodec_parameters_to_context")
        context.pointee.pkt_timebase = AVRational(timeBase)
        context.pointee.thread_count = Int32(threads)
        try open(codec, options: [])
    }

    /// Sends a packet; nil starts draining.
    public func send(_ packet: Packet?) throws(FFmpegError) -> CodecStatus {
        try Self.status(avcodec_send_packet(context, packet?.raw), "avcodec_send_packet(\(codecName))")
    }

    public func receive(_ frame: Frame) throws(FFmpegError) -> CodecStatus {
        try Self.status(avcodec_receive_frame(context, frame.raw), "avcodec_receive_frame(\(codecName))")
    }

    /// Forgets everything sent so far (and a finished drain): the next packet starts afresh.
    public func flush() { avcodec_flush_buffers(context) }

    /// Skips the loop filter from now on: faster, and only slightly wrong, for pictures that are
    /// looked at, not shown.
    public func skipLoopFilter() { context.pointee.skip_loop_filter = AVDISCARD_ALL }

    /// Audio decoders' output description.
    public var sampleRate: Int { Int(context.pointee.sample_rate) }
    public var channels: Int { Int(context.pointee.ch_layout.nb_channels) }
}
