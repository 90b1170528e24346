import FFmpegKit
import TesseraCore

/// Everything decided before any encoding: the cut plan, the frozen output format and settings
/// (level pinned), and what happens to the audio.
public struct JobPlan: Sendable {
    public enum AudioPlan: Sendable, Equatable {
        case none
        /// Copy the stream; `strict` when the user asked for it (otherwise a broken timeline is re-encoded).
        case copy(streamIndex: Int, strict: Bool)
        case encode(streamIndex: Int, sampleRate: Int, channels: Int, bitrate: Int)
    }

    public var jobID: String
    public var probe: ProbeResult
    public var cuts: CutPlan
    public var output: VideoOutputFormat
    public var settings: EncoderSettings
    public var audio: AudioPlan

    public var inputPath: String { probe.path }

    /// Opens the input again to read its packets.
    func reopenInput() throws(TesseraError) -> MediaInput {
        do {
            return try MediaInput(path: inputPath)
        } catch {
            throw .input(inputPath, "cannot reopen (\(error.message))")
        }
    }
}

public struct JobOptions: Sendable {
    public var settings: EncoderSettings
    public var audio: AudioSettings
    public var segmentSeconds: Double
    /// Parallel encoders the plan should keep busy.
    public var workers: Int
    public var maxPreRollRatio: Double

    public init(settings: EncoderSettings = EncoderSettings(), audio: AudioSettings = AudioSettings(),
                segmentSeconds: Double = 8, workers: Int = 1, maxPreRollRatio: Double = 1.5) {
        self.settings = settings
        self.audio = audio
        self.segmentSeconds = segmentSeconds
        self.workers = workers
        self.maxPreRollRatio = maxPreRollRatio
    }
}

public enum JobPlanner {
    public static func plan(_ probe: ProbeResult, options: JobOptions, jobID: String = "local") throws(TesseraError) -> JobPlan {
        var settings = options.settings
        do { try settings.validate() } catch { throw TesseraError(.settings, "", error.description) }
        guard options.segmentSeconds > 0 else { throw TesseraError(.settings, "", "--segment-seconds must be positive") }

        let video = probe.video
        let frameRate = video.averageFrameRate.isValid ? video.averageFrameRate : video.realFrameRate
        let planner: CutPlanner
        do {
            planner = try CutPlanner(packets: probe.packets, timeBase: video.timeBase, frameRate: frameRate.isValid ? frameRate : nil)
        } catch {
            throw .input(probe.path, error.description)
        }
        var planOptions = PlanOptions(segmentSeconds: options.segmentSeconds, keyint: settings.keyint,
                                      minimumSegments: max(1, options.workers * 2),
                                      maxPreRollRatio: options.maxPreRollRatio)
        planOptions.encoders = options.workers
        let cuts = planner.plan(planOptions)

        // 4:2:0 needs even dimensions.
        let width = Int32(max(2, video.width & ~1)), height = Int32(max(2, video.height & ~1))
        var params = video.parameters
        // yuvj formats are full range whether or not the stream says so.
        if params.colorRange == 0, video.pixelFormat?.hasPrefix("yuvj") == true { params.colorRange = 2 }
        let outputRate = frameRate.isValid ? frameRate : Rational(Int32((planner.framesPerSecond * 1000).rounded()), 1000)
        let output = VideoOutputFormat(
            width: width, height: height, pixelFormat: "yuv420p", timeBase: video.timeBase, frameRate: outputRate,
            sampleAspectRatio: params.sampleAspectRatio.isValid ? params.sampleAspectRatio : Rational(1, 1),
            colorRange: params.colorRange, colorPrimaries: params.colorPrimaries, colorTransfer: params.colorTransfer,
            colorSpace: params.colorSpace, chromaLocation: params.chromaLocation)

        let fps = outputRate.doubleValue
        let vbv = settings.maxrate ?? settings.bitrate
        let refs = 4
        if let name = settings.level {
            let level = H264Level.named(name)!
            if let why = level.violation(width: Int(width), height: Int(height), fps: fps, maxBitrate: vbv,
                                         profile: settings.profile, referenceFrames: 1) {
                throw TesseraError(.settings, "--level \(name)", why)
            }
            settings.level = level.name
        } else {
            guard let level = H264Level.lowest(width: Int(width), height: Int(height), fps: fps, maxBitrate: vbv,
                                               profile: settings.profile, referenceFrames: refs) else {
                throw TesseraError(.settings, probe.path, "\(width)x\(height) at \(Int(fps)) fps is beyond every H.264 level")
            }
            settings.level = level.name
        }

        return JobPlan(jobID: jobID, probe: probe, cuts: cuts, output: output, settings: settings,
                       audio: try audioPlan(probe, options.audio))
    }

    static func audioPlan(_ probe: ProbeResult, _ audio: AudioSettings) throws(TesseraError) -> JobPlan.AudioPlan {
        guard audio.mode != .none, let stream = probe.audio else { return .none }
        guard stream.sampleRate > 0, stream.channels > 0 else {
            throw .input(probe.path, "audio stream \(stream.index) (\(stream.codecName)) has no sample rate or channels")
        }
        let compatible = stream.codecName == "aac" && !stream.parameters.extradata.isEmpty
        let untouched = audio.sampleRate == nil && audio.channels == nil && audio.bitrate == nil
        switch audio.mode {
        case .copy:
            guard compatible else {
                throw TesseraError(.settings, "--audio copy", "\(probe.path) has \(stream.codecName) audio, which MP4 cannot carry as is; use --audio aac")
            }
            return .copy(streamIndex: stream.index, strict: true)
        case .auto where compatible && untouched:
            return .copy(streamIndex: stream.index, strict: false)
        default:
            let channels = audio.channels ?? min(stream.channels, 8)
            let rate = audio.sampleRate ?? (stream.sampleRate > 96000 ? 48000 : stream.sampleRate)
            return .encode(streamIndex: stream.index, sampleRate: rate, channels: channels,
                           bitrate: audio.bitrate ?? 64_000 * min(channels, 6))
        }
    }
}
