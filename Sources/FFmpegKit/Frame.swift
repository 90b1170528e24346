import CFFmpeg

/// Owns one AVFrame.
public final class Frame {
    let raw: UnsafeMutablePointer<AVFrame>

    public init() {
        guard let f = av_frame_alloc() else { fatalError("av_frame_alloc: out of memory") }
        raw = f
    }

    deinit {
        var f: UnsafeMutablePointer<AVFrame>? = raw
        av_frame_free(&f)
    }

    /// Presentation timestamp: the frame's pts, or the decoder's best guess when it has none.
    public var pts: Int64? {
        get {
            if let pts = raw.pointee.pts.optionalTimestamp { return pts }
            return raw.pointee.best_effort_timestamp.optionalTimestamp
        }
        set { raw.pointee.pts = newValue.avTimestamp }
    }
    /// The pts of the packet the picture came from, without the decoder's guess.
    public var packetPTS: Int64? { raw.pointee.pts.optionalTimestamp }
    public var width: Int { Int(raw.pointee.width) }
    public var height: Int { Int(raw.pointee.height) }
    public var pixelFormatName: String? { cString(av_get_pix_fmt_name(AVPixelFormat(raw.pointee.format))) }
    public var sampleCount: Int { Int(raw.pointee.nb_samples) }
    public var sampleRate: Int { Int(raw.pointee.sample_rate) }

    /// Forget the source's picture type so that it is not forced on the encoder.
    public func clearPictureType() {
        raw.pointee.pict_type = AV_PICTURE_TYPE_NONE
        raw.pointee.key_frame = 0
    }

    /// Asks the encoder for a P picture here: one that refers only to earlier pictures and ends its
    /// mini-GOP, so that no picture before it refers to a later one.
    public func forcePredictedPicture() {
        raw.pointee.pict_type = AV_PICTURE_TYPE_P
    }

    /// Asks the encoder for an intra picture here; an IDR with libx264's `forced-idr` option.
    public func forceIntraPicture() {
        raw.pointee.pict_type = AV_PICTURE_TYPE_I
    }

    public func unref() { av_frame_unref(raw) }
}

extension Frame {
    /// A writable video frame with its own buffers.
    public static func video(width: Int, height: Int, pixelFormat: String) throws(FFmpegError) -> Frame {
        let frame = Frame()
        frame.raw.pointee.width = Int32(width)
        frame.raw.pointee.height = Int32(height)
        frame.raw.pointee.format = av_get_pix_fmt(pixelFormat).rawValue
        try check(av_frame_get_buffer(frame.raw, 0), "av_frame_get_buffer")
        return frame
    }

    /// A writable planar video frame whose every sample is the middle of its range (flat grey).
    public static func midGrey(width: Int, height: Int, pixelFormat: String) throws(FFmpegError) -> Frame {
        let frame = try video(width: width, height: height, pixelFormat: pixelFormat)
        let format = av_get_pix_fmt(pixelFormat)
        guard let desc = av_pix_fmt_desc_get(format), desc.pointee.flags & UInt64(AV_PIX_FMT_FLAG_PLANAR) != 0 else {
            throw FFmpegError("\(pixelFormat) is not a planar format", call: "av_pix_fmt_desc_get")
        }
        let depth = Int(desc.pointee.comp.0.depth)
        for plane in 0..<Int(av_pix_fmt_count_planes(format)) {
            let rows = plane == 0 ? height : (height + (1 << desc.pointee.log2_chroma_h) - 1) >> desc.pointee.log2_chroma_h
            frame.withPlane(plane) { data, stride in
                if depth <= 8 {
                    data.update(repeating: UInt8(1 << (depth - 1)), count: stride * rows)
                } else {
                    data.withMemoryRebound(to: UInt16.self, capacity: stride * rows / 2) {
                        $0.update(repeating: UInt16(1 << (depth - 1)), count: stride * rows / 2)
                    }
                }
            }
        }
        return frame
    }

    /// Makes the buffers writable (copying them if an encoder still holds a reference).
    public func makeWritable() throws(FFmpegError) {
        try check(av_frame_make_writable(raw), "av_frame_make_writable")
    }

    /// Plane `index`'s bytes and line size.
    public func withPlane<R>(_ index: Int, _ body: (UnsafeMutablePointer<UInt8>, Int) -> R) -> R {
        let data = withUnsafeMutablePointer(to: &raw.pointee.data) {
            $0.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { $0[index] }
        }
        let stride = withUnsafeMutablePointer(to: &raw.pointee.linesize) {
            $0.withMemoryRebound(to: Int32.self, capacity: 8) { $0[index] }
        }
        return body(data!, Int(stride))
    }
}

extension Frame {
    /// A new reference to `other`'s buffers and properties (no pixel copy).
    public static func reference(to other: Frame) throws(FFmpegError) -> Frame {
        let frame = Frame()
        try check(av_frame_ref(frame.raw, other.raw), "av_frame_ref")
        return frame
    }
}
