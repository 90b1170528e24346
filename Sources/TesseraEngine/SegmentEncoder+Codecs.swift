import FFmpegKit
import Foundation
import TesseraCore

extension SegmentEncoder {
    /// The bitrate (a pass's own, else the job's) or the CRF, and the VBV: libx264's and libx265's wrappers take them alike.
    static func setRateControl(_ config: inout VideoEncoderConfig, _ options: inout [(String, String)], _ settings: EncoderSettings,
                               pass: PassInput?) {
        if let bitrate = pass?.bitrate ?? settings.bitrate {
            config.bitRate = Int64(bitrate)
        } else if let crf = settings.crf {
            options.append(("crf", String(crf)))
        }
        if let maxrate = settings.maxrate, let bufsize = settings.bufsize {
            config.maxRate = Int64(maxrate)
            config.bufferSize = Int32(clamping: bufsize)
        }
    }

    /// libx265 from the frozen settings: closed GOPs whose keyframes are IDRs (x265 makes CRA pictures by default
    /// and a forced I picture is no IDR without `forced-idr`), so that every segment starts decodable.
    /// In two passes x265 takes its pass and statistics file in its own parameters (libavcodec's `-pass` does not reach it).
    static func hevcConfig(_ output: VideoOutputFormat, _ settings: EncoderSettings, pass: PassInput?, statsPath: String?,
                           sceneCuts: Bool?, rung: Bool) -> VideoEncoderConfig {
        var config = VideoEncoderConfig(codecName: "libx265", format: output, gopSize: Int32(settings.keyint),
                                        maxBFrames: Int32(settings.effectiveBFrames))
        var options: [(String, String)] = [("preset", settings.preset), ("profile", settings.profile), ("forced-idr", "1")]
        setRateControl(&config, &options, settings, pass: pass)
        // x265 takes its threads as one pool of `pools` workers; libavcodec's thread count does not reach it. With one
        // frame thread its output does not depend on the pool's size, so the pool also takes the host's cores: a segment
        // encoded while the other encoders are idle (a job's last one) uses them (`poolThreads`).
        // `info=0`: x265 writes its options as an SEI inside the decoder headers (hvcC), so a per-segment option
        // (`scenecut=0` at an extra cut, a pass and its bitrate) would make one segment's headers differ from the others'.
        var params = ["open-gop=0", "bframes=\(settings.effectiveBFrames)", "pools=\(poolThreads(settings))", "frame-threads=1", "info=0", "log-level=error"]
        if let level = settings.level { params.append("level-idc=\(level)") }
        if sceneCuts == false { params.append("scenecut=0") }
        // A capped CRF's VBV starts half full at every segment, and a ladder rung's at x265's own 90 %, as for H.264
        // (`encoderConfig`).
        if let maxrate = settings.maxrate, maxrate > (settings.bitrate ?? 0), !rung { params.append("vbv-init=0.5") }
        if let pass, let statsPath { params += ["pass=\(pass.pass)", "stats=\(statsPath)"] }
        if !FFmpeg.simd { params.append("asm=0") }
        options.append(("x265-params", params.joined(separator: ":")))
        config.options = options
        return config
    }

    /// x265's pool and SVT-AV1's logical processors: the job's `--threads`, or the host's cores when more (at most 8:
    /// WPP rows of 1080p keep about that many busy). Neither encoder's output depends on it; each pool's threads
    /// sleep while the host's other encoders hold the cores.
    static func poolThreads(_ settings: EncoderSettings) -> Int {
        max(settings.threads, min(8, ProcessInfo.processInfo.activeProcessorCount))
    }

    /// SVT-AV1 from the frozen settings. Its preset and CRF are SVT-AV1's own numbers; `+cgop` (libavcodec's mapping)
    /// and `irefresh-type=2` keep its keyframes closed. FFmpeg 5.1's wrapper ignores forced key frames: segments start
    /// on the encode's first frame (no lead-in), and the verifier checks every segment start.
    static func av1Config(_ output: VideoOutputFormat, _ settings: EncoderSettings, pass: PassInput?) -> VideoEncoderConfig {
        var config = VideoEncoderConfig(codecName: "libsvtav1", format: output, gopSize: Int32(settings.keyint), maxBFrames: 0)
        var options: [(String, String)] = [("preset", settings.preset)]
        if let bitrate = pass?.bitrate ?? settings.bitrate {
            config.bitRate = Int64(bitrate)
        } else if let crf = settings.crf {
            options.append(("crf", String(Int(crf))))
        }
        // A ladder rung's cap: SVT-AV1 runs capped CRF (its `mbr`) from libavcodec's maxrate.
        if settings.crf != nil, let maxrate = settings.maxrate, let bufsize = settings.bufsize {
            config.maxRate = Int64(maxrate)
            config.bufferSize = Int32(clamping: bufsize)
        }
        var params = ["irefresh-type=2", "lp=\(poolThreads(settings))"]
        if !FFmpeg.simd { params.append("asm=0") }
        options.append(("svtav1-params", params.joined(separator: ":")))
        config.options = options
        return config
    }
}
