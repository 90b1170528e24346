import FFmpegKit
import TesseraCore

/// What happens to each decoded frame before the encoder: scaling to the output size and pixel format
/// (with a colour-matrix conversion when asked), then the quarter turns and mirror images. Every step
/// is fixed by the frozen output format, so every segment of a job gets the same treatment.
final class PicturePipeline {
    let scaler: Scaler
    let transform: PictureTransform?

    init(_ output: VideoOutputFormat) throws(FFmpegError) {
        let size = output.scaledSize
        scaler = try Scaler(width: size.width, height: size.height, pixelFormat: output.pixelFormat,
                            fullRange: output.colorRange == 2, quality: output.scaler ?? "bicubic",
                            convertMatrix: output.convertsFromColorSpace.map { ($0, output.colorSpace) })
        transform = output.transformsPicture
            ? PictureTransform(quarterTurns: output.quarterTurns ?? 0, mirrorHorizontal: output.mirrorHorizontal == true,
                               mirrorVertical: output.mirrorVertical == true)
            : nil
    }

    /// The frame to encode; owned by the pipeline (or `frame` itself) and valid until the next call.
    func prepare(_ frame: Frame) throws(FFmpegError) -> Frame {
        let scaled = scaler.passesThrough(frame) ? frame : try scaler.scale(frame)
        return try transform?.apply(scaled) ?? scaled
    }
}
