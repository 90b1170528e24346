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

    public init(width: Int32, height: Int32, pixelFormat: String, quality: String = "bicubic") throws(FFmpegError) {
        self.width = width
        self.height = height
        format = av_get_pix_fmt(pixelFormat)
        guard format != AV_PIX_FMT_NONE else { throw FFmpegError("unknown pixel format \(pixelFormat)", call: "av_get_pix_fmt") }
        switch quality {
        case "fast": flags = SWS_FAST_BILINEAR
        case "bilinear": flags = SWS_BILINEAR
        case "lanczos": flags = SWS_LANCZOS
        default: flags = SWS_BICUBIC
        }
    }

    deinit { sws_freeContext(context) }

    /// Whether `frame` already has the output size and format.
    public func passesThrough(_ frame: Frame) -> Bool {
        frame.raw.pointee.width == width && frame.raw.pointee.height == height && frame.raw.pointee.format == format.rawValue
    }

    /// Converts `frame`; the result is owned by the scaler and valid until the next call.
    public func scale(_ frame: Frame) throws(FFmpegError) -> Frame {
        let src = frame.raw
        let key = (src.pointee.width, src.pointee.height, src.pointee.format)
        if context == nil || key != sourceKey {
            sws_freeContext(context)
            context = sws_getContext(key.0, key.1, AVPixelFormat(key.2), width, height, format, flags, nil, nil, nil)
            guard context != nil else { throw FFmpegError("cannot convert \(frame.pixelFormatName ?? "?") \(key.0)x\(key.1)", call: "sws_getContext") }
            sourceKey = key
        }
        output.unref()
        output.raw.pointee.width = width
        output.raw.pointee.height = height
        output.raw.pointee.format = format.rawValue
        try check(av_frame_get_buffer(output.raw, 0), "av_frame_get_buffer")
        try check(sws_scale_frame(context, output.raw, src), "sws_scale_frame")
        try check(av_frame_copy_props(output.raw, src), "av_frame_copy_props")
        return output
    }
}
