import FFmpegKit
import TesseraCore

/// What an input asks of the encoders, estimated from its header alone (no packet is read), for ordering a queue
/// at submit: its video's frames times its width and height.
public enum InputWork {
    /// Pixels to encode in `path`'s video; nil when the file cannot be opened or says too little.
    public static func pixels(_ path: String) -> Double? {
        guard let input = try? MediaInput(path: path), let video = input.bestVideoStream, video.width > 0, video.height > 0 else { return nil }
        guard let frames = frames(counted: video.frameCountHint, seconds: input.durationSeconds, rate: video.averageFrameRate) else { return nil }
        return frames * Double(video.width) * Double(video.height)
    }

    /// The frames a header gives: counted (MP4 sample tables), else its duration at its frame rate.
    static func frames(counted: Int, seconds: Double?, rate: Rational) -> Double? {
        if counted > 0 { return Double(counted) }
        guard let seconds, seconds > 0, rate.isValid else { return nil }
        return seconds * rate.doubleValue
    }
}
