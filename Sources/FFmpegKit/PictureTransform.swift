import CFFmpeg

/// Quarter turns and mirror images of planar YUV frames (8 or 16 bits a sample, the same chroma
/// subsampling both ways). Each output sample is read from one source sample: no filtering, so the
/// result is exact and the same on every machine. One per thread.
public final class PictureTransform {
    let quarterTurns: Int
    let mirrorHorizontal: Bool
    let mirrorVertical: Bool
    let output = Frame()

    /// - Parameter quarterTurns: clockwise, 0...3. The mirror images apply after the turn.
    public init(quarterTurns: Int, mirrorHorizontal: Bool, mirrorVertical: Bool) {
        self.quarterTurns = ((quarterTurns % 4) + 4) % 4
        self.mirrorHorizontal = mirrorHorizontal
        self.mirrorVertical = mirrorVertical
    }

    /// The turned frame; owned by the transform and valid until the next call.
    public func apply(_ frame: Frame) throws(FFmpegError) -> Frame {
        let src = frame.raw
        let format = AVPixelFormat(src.pointee.format)
        guard let desc = av_pix_fmt_desc_get(format), desc.pointee.flags & UInt64(AV_PIX_FMT_FLAG_PLANAR) != 0,
              desc.pointee.log2_chroma_w == desc.pointee.log2_chroma_h else {
            throw FFmpegError("cannot rotate \(frame.pixelFormatName ?? "?") frames (planar, evenly subsampled formats only)",
                              call: "PictureTransform")
        }
        let bytes = desc.pointee.comp.0.step == 2 || desc.pointee.comp.0.depth > 8 ? 2 : 1
        let width = Int(src.pointee.width), height = Int(src.pointee.height)
        let odd = quarterTurns % 2 == 1
        output.unref()
        output.raw.pointee.width = Int32(odd ? height : width)
        output.raw.pointee.height = Int32(odd ? width : height)
        output.raw.pointee.format = src.pointee.format
        try check(av_frame_get_buffer(output.raw, 0), "av_frame_get_buffer")
        try check(av_frame_copy_props(output.raw, src), "av_frame_copy_props")

        let planes = Int(av_pix_fmt_count_planes(format))
        let shift = Int(desc.pointee.log2_chroma_w)
        for plane in 0..<planes {
            let chroma = plane == 1 || plane == 2
            let w = chroma ? -((-width) >> shift) : width
            let h = chroma ? -((-height) >> shift) : height
            frame.withPlane(plane) { source, sourceStride in
                output.withPlane(plane) { target, targetStride in
                    if bytes == 1 {
                        copy(UInt8.self, source, sourceStride, w, h, target, targetStride)
                    } else {
                        copy(UInt16.self, source, sourceStride / 2, w, h, target, targetStride / 2)
                    }
                }
            }
        }
        return output
    }

    /// Writes the turned plane: output sample (x', y') comes from source element
    /// `origin + x'·dx + y'·dy`, with the steps set by the turn and the mirrors.
    func copy<T>(_: T.Type, _ source: UnsafeMutablePointer<UInt8>, _ sourceStride: Int, _ w: Int, _ h: Int,
                 _ target: UnsafeMutablePointer<UInt8>, _ targetStride: Int) {
        let src = UnsafeMutableRawPointer(source).assumingMemoryBound(to: T.self)
        let dst = UnsafeMutableRawPointer(target).assumingMemoryBound(to: T.self)
        let outW = quarterTurns % 2 == 1 ? h : w, outH = quarterTurns % 2 == 1 ? w : h
        // Source coordinates as functions of the output's: x = ax·x' + bx·y' + cx, y = ay·x' + by·y' + cy.
        var (ax, bx, cx, ay, by, cy): (Int, Int, Int, Int, Int, Int)
        switch quarterTurns {
        case 1: (ax, bx, cx, ay, by, cy) = (0, 1, 0, -1, 0, h - 1)
        case 2: (ax, bx, cx, ay, by, cy) = (-1, 0, w - 1, 0, -1, h - 1)
        case 3: (ax, bx, cx, ay, by, cy) = (0, -1, w - 1, 1, 0, 0)
        default: (ax, bx, cx, ay, by, cy) = (1, 0, 0, 0, 1, 0)
        }
        // Mirroring the output substitutes x' → outW-1-x' (and y' → outH-1-y').
        if mirrorHorizontal { (cx, cy, ax, ay) = (cx + ax * (outW - 1), cy + ay * (outW - 1), -ax, -ay) }
        if mirrorVertical { (cx, cy, bx, by) = (cx + bx * (outH - 1), cy + by * (outH - 1), -bx, -by) }
        let dx = ax + ay * sourceStride, dy = bx + by * sourceStride
        let origin = cx + cy * sourceStride
        for y in 0..<outH {
            var s = src + (origin + y * dy)
            let row = dst + y * targetStride
            for x in 0..<outW {
                row[x] = s.pointee
                s += dx
            }
        }
    }
}
