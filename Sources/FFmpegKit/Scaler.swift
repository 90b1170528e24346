import CFFmpeg
import CTesseraShim

/// swscale: converts decoded frames to the output size and pixel format. One per thread.
public final class Scaler {
    var context: OpaquePointer?
    let width: Int32
    let height: Int32
    let format: AVPixelFormat
    let flags: Int32
    var sourceKey: (Int32, Int32, Int32) = (0, 0, -1)
    let output = Frame()

    /// Whether the output is full range (0-255); the source's range is read from each frame.
    let fullRange: Bool
    /// YUV matrices (AVColorSpace values) to convert between; nil keeps the samples' matrix.
    let matrices: (from: Int32, to: Int32)?

    /// When set, converts from each frame's own YUV matrix to this one (an AVColorSpace value: 5 is
    /// BT.601, what JPEG and RGB conversion expect); when nil the matrix is kept as it is.
    public var outputColorSpace: Int32?

    public init(width: Int32, height: Int32, pixelFormat: String, fullRange: Bool = false, quality: String = "bicubic",
                convertMatrix matrices: (from: Int32, to: Int32)? = nil) throws(FFmpegError) {
        self.width = width
        self.height = height
        self.fullRange = fullRange
        self.matrices = matrices.flatMap { $0.from == $0.to ? nil : $0 }
        format = av_get_pix_fmt(pixelFormat)
        guard format != AV_PIX_FMT_NONE else { throw FFmpegError("unknown pixel format \(pixelFormat)", call: "av_get_pix_fmt") }
        switch quality {
        case "fast": flags = SWS_FAST_BILINEAR
        case "bilinear": flags = SWS_BILINEAR
        case "lanczos": flags = SWS_LANCZOS
        case "area": flags = SWS_AREA
        default: flags = SWS_BICUBIC
        }
    }

    deinit { sws_freeContext(context) }

    /// Whether `frame` already has the output size, format and range; then it goes to the encoder as is.
    /// A full-range `yuvj` frame passes as its plain twin when the output is full range too.
    public func passesThrough(_ frame: Frame) -> Bool {
        guard matrices == nil else { return false }
        guard frame.raw.pointee.width == width && frame.raw.pointee.height == height else { return false }
        let source = frame.raw.pointee.format
        if source == format.rawValue { return Self.isFullRange(frame) == fullRange }
        if fullRange, Self.plainTwin(AVPixelFormat(source)) == format {
            frame.raw.pointee.format = format.rawValue
            return true
        }
        return false
    }

    static func plainTwin(_ format: AVPixelFormat) -> AVPixelFormat? {
        switch format {
        case AV_PIX_FMT_YUVJ420P: return AV_PIX_FMT_YUV420P
        case AV_PIX_FMT_YUVJ422P: return AV_PIX_FMT_YUV422P
        case AV_PIX_FMT_YUVJ444P: return AV_PIX_FMT_YUV444P
        default: return nil
        }
    }

    static func isFullRange(_ frame: Frame) -> Bool {
        frame.raw.pointee.color_range == AVCOL_RANGE_JPEG || plainTwin(AVPixelFormat(frame.raw.pointee.format)) != nil
    }

    /// Converts `frame`; the result is owned by the scaler and valid until the next call.
    public func scale(_ frame: Frame) throws(FFmpegError) -> Frame {
        let src = frame.raw
        let key = (src.pointee.width, src.pointee.height, src.pointee.format)
        if context == nil || key != sourceKey {
            sws_freeContext(context)
            context = sws_getContext(key.0, key.1, AVPixelFormat(key.2), width, height, format, flags, nil, nil, nil)
            guard context != nil else { throw FFmpegError("cannot convert \(frame.pixelFormatName ?? "?") \(key.0)x\(key.1)", call: "sws_getContext") }
            // Keep the range: full-range sources stay full range when the output is tagged full range.
            // swscale's coefficient table is indexed by AVColorSpace (unknown values mean BT.601).
            let sourceSpace = matrices?.from ?? (outputColorSpace == nil ? SWS_CS_DEFAULT : Int32(src.pointee.colorspace.rawValue))
            let from = sws_getCoefficients(sourceSpace)
            let to = sws_getCoefficients(matrices?.to ?? outputColorSpace ?? sourceSpace)
            sws_setColorspaceDetails(context, from, Self.isFullRange(frame) ? 1 : 0, to, fullRange ? 1 : 0,
                                     0, 1 << 16, 1 << 16)
            sourceKey = key
        }
        output.unref()
        output.raw.pointee.width = width
        output.raw.pointee.height = height
        output.raw.pointee.format = format.rawValue
        try check(av_frame_get_buffer(output.raw, 0), "av_frame_get_buffer")
        try check(sws_scale_frame(context, output.raw, src), "sws_scale_frame")
        try check(av_frame_copy_props(output.raw, src), "av_frame_copy_props")
        output.raw.pointee.color_range = fullRange ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG
        return output
    }
}
