import CFFmpeg
import CTesseraShim
import TesseraCore

/// A muxer writing to a real file path (faststart rewrites the file by reopening its path), into memory
/// (`init(inMemory:)`, for fragmented output cut into files by the caller), or into a `ByteSink` (`init(sink:)`).
public final class MediaOutput {
    var context: UnsafeMutablePointer<AVFormatContext>?
    public let path: String
    /// The output goes to a dynamic buffer, not a file (see MediaOutput+Fragments.swift).
    let inMemory: Bool
    /// The output goes to a sink through this context, not a file.
    private var sinkIO: SinkIO?
    var headerWritten = false
    var finished = false

    public init(path: String, format: String = "mp4") throws(FFmpegError) {
        self.path = path
        inMemory = false
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        try check(avformat_alloc_output_context2(&ctx, nil, format, path), "avformat_alloc_output_context2")
        context = ctx
        try check(avio_open(&ctx!.pointee.pb, path, AVIO_FLAG_WRITE), "avio_open(\(path))")
    }

    /// A muxer of `format` writing into `sink`, seeking in it as in a file; `name` stands for it in errors.
    public init(sink: any ByteSink, name: String, format: String = "mp4") throws(FFmpegError) {
        path = name
        inMemory = false
        let io = try SinkIO(sink)
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        try check(avformat_alloc_output_context2(&ctx, nil, format, nil), "avformat_alloc_output_context2(\(format))")
        ctx!.pointee.pb = io.context
        ctx!.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        context = ctx
        sinkIO = io
    }

    /// What stopped the sink, when a write failed because the sink threw.
    public var sinkFailure: (any Error)? { sinkIO?.failure }

    /// Adopts a context whose output is a dynamic buffer (`init(inMemory:)`).
    init(memoryContext ctx: UnsafeMutablePointer<AVFormatContext>) {
        path = ""
        inMemory = true
        context = ctx
    }

    deinit {
        if let ctx = context {
            if inMemory { discardBuffer() } else if sinkIO != nil { ctx.pointee.pb = nil } else if ctx.pointee.pb != nil { avio_closep(&ctx.pointee.pb) }
            avformat_free_context(ctx)
        }
    }

    /// Adds a stream carrying an encoder's output; returns its index.
    public func addStream(from encoder: Encoder) throws(FFmpegError) -> Int {
        let stream = try newStream()
        try encoder.copyParameters(to: stream.pointee.codecpar)
        stream.pointee.codecpar.pointee.codec_tag = 0
        stream.pointee.time_base = AVRational(encoder.timeBase)
        return Int(stream.pointee.index)
    }

    /// Adds a stream copying an input stream as is (audio passthrough); returns its index.
    public func addStream(copying streamIndex: Int, of input: MediaInput) throws(FFmpegError) -> Int {
        guard let source = input.context?.pointee.streams[streamIndex] else { throw FFmpegError("no stream \(streamIndex)", call: "addStream") }
        let stream = try newStream()
        try check(avcodec_parameters_copy(stream.pointee.codecpar, source.pointee.codecpar), "avcodec_parameters_copy")
        stream.pointee.codecpar.pointee.codec_tag = 0
        stream.pointee.time_base = source.pointee.time_base
        return Int(stream.pointee.index)
    }

    /// Adds a video stream from codec parameters and the encoder's extradata (stitching).
    public func addStream(parameters: CodecParameters, timeBase: Rational, frameRate: Rational?) throws(FFmpegError) -> Int {
        let stream = try newStream()
        try parameters.apply(to: stream.pointee.codecpar)
        // Only a tag the muxer must write (HEVC's `hvc1`); a source's tag may not suit MP4.
        if parameters.codecName != "hevc" { stream.pointee.codecpar.pointee.codec_tag = 0 }
        stream.pointee.time_base = AVRational(timeBase)
        if let frameRate, frameRate.isValid { stream.pointee.avg_frame_rate = AVRational(frameRate) }
        return Int(stream.pointee.index)
    }

    /// Gives a stream a display matrix (how players rotate or flip it). Call before `writeHeader`.
    public func setDisplayMatrix(_ matrix: [Int32], stream: Int) throws(FFmpegError) {
        guard matrix.count == 9 else { throw FFmpegError("a display matrix has 9 entries", call: "setDisplayMatrix") }
        try check(tessera_stream_set_display_matrix(context!.pointee.streams[stream], matrix), "av_stream_new_side_data")
    }

    func newStream() throws(FFmpegError) -> UnsafeMutablePointer<AVStream> {
        guard let stream = avformat_new_stream(context, nil) else { throw FFmpegError(code: tessera_averror_enomem(), call: "avformat_new_stream") }
        return stream
    }

    /// The time base the muxer chose for a stream (valid after `writeHeader`).
    public func timeBase(of stream: Int) -> Rational { context!.pointee.streams[stream]!.pointee.time_base.rational }

    public func writeHeader(options: [(String, String)] = []) throws(FFmpegError) {
        var dict: OpaquePointer?
        for (k, v) in options { av_dict_set(&dict, k, v, 0) }
        defer { av_dict_free(&dict) }
        try check(avformat_write_header(context, &dict), "avformat_write_header")
        headerWritten = true
    }

    /// Writes a packet given in `timeBase` to `stream`, rescaled to the stream's time base.
    public func write(_ packet: Packet, stream: Int, timeBase: Rational) throws(FFmpegError) {
        prepare(packet, stream: stream, timeBase: timeBase)
        try check(av_interleaved_write_frame(context, packet.raw), "av_interleaved_write_frame")
    }

    /// Points a packet given in `timeBase` at `stream`, rescaled to the stream's time base, with no file position.
    func prepare(_ packet: Packet, stream: Int, timeBase: Rational) {
        packet.raw.pointee.stream_index = Int32(stream)
        av_packet_rescale_ts(packet.raw, AVRational(timeBase), context!.pointee.streams[stream]!.pointee.time_base)
        packet.raw.pointee.pos = -1
    }

    /// Writes the trailer (and, with faststart, moves moov to the front) and closes the file.
    public func finish() throws(FFmpegError) {
        guard let ctx = context, !finished else { return }
        finished = true
        try check(av_write_trailer(ctx), "av_write_trailer")
        if inMemory { discardBuffer() } else if sinkIO != nil { avio_flush(ctx.pointee.pb) } else { try check(avio_closep(&ctx.pointee.pb), "avio_closep") }
    }
}
