import FFmpegKit
import TesseraCore

/// Turns the user's picture settings and the probed source into the frozen output format: final size
/// (rotation, box fitting, even dimensions), pixel format, frame rate and colour.
enum OutputPicture {
    static func format(_ probe: ProbeResult, _ picture: PictureSettings, _ settings: EncoderSettings,
                       sourceRate: Rational) throws(TesseraError) -> VideoOutputFormat {
        let video = probe.video
        var params = video.parameters
        // yuvj formats are full range whether or not the stream says so.
        if params.colorRange == 0, video.pixelFormat?.hasPrefix("yuvj") == true { params.colorRange = 2 }

        let (turns, keepsMatrix) = picture.quarterTurns(sourceRotation: video.rotation)
        let odd = turns % 2 == 1
        // The upright picture: stored size and pixel aspect, turned.
        let storedSAR = params.sampleAspectRatio.isValid ? params.sampleAspectRatio : Rational(1, 1)
        let uprightWidth = odd ? video.height : video.width, uprightHeight = odd ? video.width : video.height
        let sar = odd ? storedSAR.inverse : storedSAR
        let displayWidth = Double(uprightWidth) * sar.doubleValue, displayHeight = Double(uprightHeight)

        var width = uprightWidth & ~1, height = uprightHeight & ~1
        var outputSAR = sar
        if let size = picture.size {
            (width, height) = (size.width, size.height)
            outputSAR = Rational(1, 1)
        } else if let box = picture.maxSize {
            let scale = min(1, Double(box.width) / displayWidth, Double(box.height) / displayHeight)
            if scale < 1 || sar != Rational(1, 1) {
                width = even(displayWidth * scale, limit: box.width)
                height = even(displayHeight * scale, limit: box.height)
                outputSAR = Rational(1, 1)
            }
        }
        width = max(2, width)
        height = max(2, height)

        let rate = picture.fps ?? sourceRate
        var format = VideoOutputFormat(
            width: Int32(width), height: Int32(height), pixelFormat: settings.tenBit ? "yuv420p10le" : "yuv420p",
            timeBase: picture.fps?.inverse ?? video.timeBase, frameRate: rate, sampleAspectRatio: outputSAR,
            colorRange: params.colorRange, colorPrimaries: params.colorPrimaries, colorTransfer: params.colorTransfer,
            colorSpace: params.colorSpace, chromaLocation: params.chromaLocation)
        format.quarterTurns = turns == 0 ? nil : turns
        if picture.mirrorsHorizontally { format.mirrorHorizontal = true }
        if picture.mirrorsVertically { format.mirrorVertical = true }
        format.scaler = picture.scaler
        if picture.fps != nil { format.resamplesFrameRate = true }
        if keepsMatrix, let matrix = video.displayMatrix, video.rotation != 0 { format.displayMatrix = matrix }

        if let standard = picture.color {
            // What the source's samples are: its tag, else what players assume for its size.
            let unspecified: Set<Int32> = [0, 2]
            let sourceMatrix = unspecified.contains(params.colorSpace) ? (video.height >= 720 ? 1 : 6) : params.colorSpace
            let target: Int32 = standard == .bt709 ? 1 : 6
            format.colorPrimaries = target
            format.colorTransfer = target
            format.colorSpace = target
            if sourceMatrix != target { format.convertsFromColorSpace = sourceMatrix }
        }
        return format
    }

    /// The nearest even whole number to `value`, at most `limit` rounded down to even.
    static func even(_ value: Double, limit: Int) -> Int {
        min(Int((value / 2).rounded()) * 2, limit & ~1)
    }
}
