import CFFmpeg
import CTesseraShim
import Glibc
import TesseraCore

/// How to set up a video encoder: the AVCodecContext fields and the codec's private options.
public struct VideoEncoderConfig: Sendable {
    public var codecName: String
    public var format: VideoOutputFormat
    public var gopSize: Int32
    public var maxBFrames: Int32
    public var bitRate: Int64 = 0
    public var maxRate: Int64 = 0
    public var bufferSize: Int32 = 0
    public var level: Int32 = -99
    public var threads: Int32 = 1
    public var closedGOP = true
    public var globalHeader = true
    /// Rate-control pass: 0 one pass, 1 writes libx264's stats, 2 reads them (the `stats` option names the file).
    public var pass = 0
    /// Private options of the codec (libx264: preset, crf, profile, x264-params).
    public var options: [(String, String)] = []

    public init(codecName: String, format: VideoOutputFormat, gopSize: Int32, maxBFrames: Int32) {
        self.codecName = codecName
        self.format = format
        self.gopSize = gopSize
        self.maxBFrames = maxBFrames
    }
}

/// How to set up an audio encoder.
public struct AudioEncoderConfig: Sendable {
    public var codecName: String
    public var sampleRate: Int32
    public var channels: Int32
    public var bitRate: Int64
    public var globalHeader = true

    public init(codecName: String, sampleRate: Int32, channels: Int32, bitRate: Int64) {
        self.codecName = codecName
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitRate = bitRate
    }
}

/// An opened encoder.
public final class Encoder: CodecContext {
    public let timeBase: Rational

    public init(video config: VideoEncoderConfig) throws(FFmpegError) {
        guard let codec = avcodec_find_encoder_by_name(config.codecName) else {
            throw FFmpegError("encoder \(config.codecName) is not available in this FFmpeg build", call: "avcodec_find_encoder_by_name")
        }
        timeBase = config.format.timeBase
        if config.codecName == "libsvtav1" { Self.quietSVT }
        try super.init(codec: codec)
        let f = config.format
        let ctx = context
        ctx.pointee.width = f.width
        ctx.pointee.height = f.height
        ctx.pointee.pix_fmt = av_get_pix_fmt(f.pixelFormat)
        guard ctx.pointee.pix_fmt != AV_PIX_FMT_NONE else {
            throw FFmpegError("unknown pixel format \(f.pixelFormat)", call: "av_get_pix_fmt")
        }
        ctx.pointee.time_base = AVRational(f.timeBase)
        if f.frameRate.isValid { ctx.pointee.framerate = AVRational(f.frameRate) }
        ctx.pointee.sample_aspect_ratio = AVRational(f.sampleAspectRatio)
        ctx.pointee.color_range = AVColorRange(UInt32(bitPattern: f.colorRange))
        ctx.pointee.color_primaries = AVColorPrimaries(UInt32(bitPattern: f.colorPrimaries))
        ctx.pointee.color_trc = AVColorTransferCharacteristic(UInt32(bitPattern: f.colorTransfer))
        ctx.pointee.colorspace = AVColorSpace(UInt32(bitPattern: f.colorSpace))
        ctx.pointee.chroma_sample_location = AVChromaLocation(UInt32(bitPattern: f.chromaLocation))
        ctx.pointee.gop_size = config.gopSize
        ctx.pointee.max_b_frames = config.maxBFrames
        ctx.pointee.bit_rate = config.bitRate
        ctx.pointee.rc_max_rate = config.maxRate
        ctx.pointee.rc_buffer_size = config.bufferSize
        ctx.pointee.level = config.level
        ctx.pointee.thread_count = config.threads
        // OR the flags in: assigning GLOBAL_HEADER alone would clear the closed-GOP flag.
        if config.globalHeader { ctx.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER) }
        if config.closedGOP { ctx.pointee.flags |= Int32(bitPattern: UInt32(AV_CODEC_FLAG_CLOSED_GOP)) }
        // The first pass also gets libx264's fast first-pass settings (the wrapper's `fastfirstpass`, on by default).
        if config.pass == 1 { ctx.pointee.flags |= Int32(AV_CODEC_FLAG_PASS1) }
        if config.pass == 2 { ctx.pointee.flags |= Int32(AV_CODEC_FLAG_PASS2) }
        var options = config.options
        if !FFmpeg.simd, config.codecName == "libx264" {
            // libx264 detects the CPU itself: `asm=0` keeps it to plain C as well.
            if let n = options.firstIndex(where: { $0.0 == "x264-params" }) { options[n].1 += ":asm=0" } else { options.append(("x264-params", "asm=0")) }
        }
        try open(codec, options: options)
    }

    public init(audio config: AudioEncoderConfig) throws(FFmpegError) {
        guard let codec = avcodec_find_encoder_by_name(config.codecName) else {
            throw FFmpegError("encoder \(config.codecName) is not available in this FFmpeg build", call: "avcodec_find_encoder_by_name")
        }
        timeBase = Rational(1, config.sampleRate)
        try super.init(codec: codec)
        let ctx = context
        ctx.pointee.sample_rate = config.sampleRate
        ctx.pointee.sample_fmt = codec.pointee.sample_fmts?.pointee ?? AV_SAMPLE_FMT_FLTP
        tessera_set_default_channel_layout(ctx, config.channels)
        ctx.pointee.bit_rate = config.bitRate
        ctx.pointee.time_base = AVRational(num: 1, den: config.sampleRate)
        if config.globalHeader { ctx.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER) }
        try open(codec, options: [])
    }

    /// SVT-AV1 prints its configuration at info level to stderr for every encoder: warnings and errors only, unless
    /// SVT_LOG says otherwise. SVT-AV1 reads it when its first encoder opens; set once, before that.
    private static let quietSVT: Void = { setenv("SVT_LOG", "2", 0) }()

    /// Whether the encoder was given a frame, and told the end of its frames.
    private var fed = false
    private var flushed = false

    /// SVT-AV1 never returns from freeing an encoder that was not told the end ("deinit called without sending
    /// EOS"), nor from being told the end before any frame: an encoder closed early (headers only, or an error
    /// mid-segment) is given a grey frame if it had none, told the end, and its packets taken.
    deinit {
        guard codecName == "libsvtav1", !flushed else { return }
        let ctx = context.pointee
        if !fed, let name = av_get_pix_fmt_name(ctx.pix_fmt),
           let grey = try? Frame.midGrey(width: Int(ctx.width), height: Int(ctx.height), pixelFormat: String(cString: name)) {
            grey.pts = 0
            _ = try? send(grey)
        }
        guard fed, (try? send(nil)) != nil else { return }
        let packet = Packet()
        while (try? receive(packet)) == .ready { packet.unref() }
    }

    /// Sends a frame; nil flushes (drains) the encoder.
    public func send(_ frame: Frame?) throws(FFmpegError) -> CodecStatus {
        if frame == nil { flushed = true } else { fed = true }
        return try Self.status(avcodec_send_frame(context, frame?.raw), "avcodec_send_frame(\(codecName))")
    }

    public func receive(_ packet: Packet) throws(FFmpegError) -> CodecStatus {
        try Self.status(avcodec_receive_packet(context, packet.raw), "avcodec_receive_packet(\(codecName))")
    }

    /// The encoder's output parameters, as a muxer stream needs them.
    public var parameters: CodecParameters {
        get throws(FFmpegError) {
            guard let par = avcodec_parameters_alloc() else { throw FFmpegError(code: tessera_averror_enomem(), call: "avcodec_parameters_alloc") }
            var owned: UnsafeMutablePointer<AVCodecParameters>? = par
            defer { avcodec_parameters_free(&owned) }
            try copyParameters(to: par)
            return CodecParameters(par.pointee)
        }
    }

    /// Samples per audio frame the encoder takes (1024 for AAC).
    public var frameSize: Int { Int(context.pointee.frame_size) }
    /// Samples the encoder primes before the first real one.
    public var initialPadding: Int { Int(context.pointee.initial_padding) }
    public var sampleRate: Int { Int(context.pointee.sample_rate) }
    public var channels: Int { Int(context.pointee.ch_layout.nb_channels) }

    /// A frame sized for this audio encoder, with `samples` samples allocated.
    public func makeAudioFrame(samples: Int) throws(FFmpegError) -> Frame {
        let frame = Frame()
        frame.raw.pointee.nb_samples = Int32(samples)
        frame.raw.pointee.format = context.pointee.sample_fmt.rawValue
        frame.raw.pointee.sample_rate = context.pointee.sample_rate
        try check(av_channel_layout_copy(&frame.raw.pointee.ch_layout, &context.pointee.ch_layout), "av_channel_layout_copy")
        try check(av_frame_get_buffer(frame.raw, 0), "av_frame_get_buffer")
        return frame
    }
}
