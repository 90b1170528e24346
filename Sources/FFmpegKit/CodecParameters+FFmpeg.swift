import CFFmpeg
import CTesseraShim
import TesseraCore

extension CodecParameters {
    /// The Swift copy of a stream's AVCodecParameters (video fields; audio travels as the whole stream).
    init(_ par: AVCodecParameters) {
        self.init(codecName: cString(avcodec_get_name(par.codec_id)) ?? "unknown")
        codecTag = par.codec_tag
        if let data = par.extradata, par.extradata_size > 0 {
            extradata = Array(UnsafeBufferPointer(start: data, count: Int(par.extradata_size)))
        }
        if par.codec_type == AVMEDIA_TYPE_VIDEO {
            pixelFormat = cString(av_get_pix_fmt_name(AVPixelFormat(par.format)))
        }
        bitRate = par.bit_rate
        bitsPerCodedSample = par.bits_per_coded_sample
        bitsPerRawSample = par.bits_per_raw_sample
        profile = par.profile
        level = par.level
        width = par.width
        height = par.height
        sampleAspectRatio = par.sample_aspect_ratio.rational
        fieldOrder = Int32(bitPattern: par.field_order.rawValue)
        colorRange = Int32(bitPattern: par.color_range.rawValue)
        colorPrimaries = Int32(bitPattern: par.color_primaries.rawValue)
        colorTransfer = Int32(bitPattern: par.color_trc.rawValue)
        colorSpace = Int32(bitPattern: par.color_space.rawValue)
        chromaLocation = Int32(bitPattern: par.chroma_location.rawValue)
        videoDelay = par.video_delay
        if par.codec_type == AVMEDIA_TYPE_AUDIO {
            sampleFormat = cString(av_get_sample_fmt_name(AVSampleFormat(par.format)))
            sampleRate = par.sample_rate
            channels = par.ch_layout.nb_channels
            frameSize = par.frame_size
            initialPadding = par.initial_padding
        }
    }

    /// Writes these values into a freshly allocated AVCodecParameters (video).
    func apply(to par: UnsafeMutablePointer<AVCodecParameters>) throws(FFmpegError) {
        guard let descriptor = avcodec_descriptor_get_by_name(codecName) else {
            throw FFmpegError("unknown codec '\(codecName)'", call: "avcodec_descriptor_get_by_name")
        }
        par.pointee.codec_type = descriptor.pointee.type
        par.pointee.codec_id = descriptor.pointee.id
        par.pointee.codec_tag = codecTag
        if !extradata.isEmpty {
            let size = extradata.count
            guard let buffer = av_mallocz(size + 64)?.assumingMemoryBound(to: UInt8.self) else {
                throw FFmpegError(code: -12, call: "av_mallocz")
            }
            extradata.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: size) }
            av_freep(&par.pointee.extradata)
            par.pointee.extradata = buffer
            par.pointee.extradata_size = Int32(size)
        }
        if let pixelFormat {
            par.pointee.format = av_get_pix_fmt(pixelFormat).rawValue
        }
        par.pointee.bit_rate = bitRate
        par.pointee.bits_per_coded_sample = bitsPerCodedSample
        par.pointee.bits_per_raw_sample = bitsPerRawSample
        par.pointee.profile = profile
        par.pointee.level = level
        par.pointee.width = width
        par.pointee.height = height
        par.pointee.sample_aspect_ratio = AVRational(sampleAspectRatio)
        par.pointee.field_order = AVFieldOrder(UInt32(bitPattern: fieldOrder))
        par.pointee.color_range = AVColorRange(UInt32(bitPattern: colorRange))
        par.pointee.color_primaries = AVColorPrimaries(UInt32(bitPattern: colorPrimaries))
        par.pointee.color_trc = AVColorTransferCharacteristic(UInt32(bitPattern: colorTransfer))
        par.pointee.color_space = AVColorSpace(UInt32(bitPattern: colorSpace))
        par.pointee.chroma_location = AVChromaLocation(UInt32(bitPattern: chromaLocation))
        par.pointee.video_delay = videoDelay
        if let sampleFormat {
            par.pointee.format = av_get_sample_fmt(sampleFormat).rawValue
        }
        if channels > 0 {
            par.pointee.sample_rate = sampleRate
            tessera_set_codecpar_channels(par, channels)
            par.pointee.frame_size = frameSize
            par.pointee.initial_padding = initialPadding
        }
    }
}
