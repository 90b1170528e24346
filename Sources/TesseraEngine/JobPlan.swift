import Foundation
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
    /// The input as the job pinned it: every reopen checks it (nil: not pinned, a local transcode).
    public var inputIdentity: InputIdentity?
    /// A two-pass job's second pass, by segment (one input per rung, a single output's one), once its bits are
    /// allocated; nil: its first pass runs.
    public var secondPass: [Int: [PassInput]]?
    /// A ladder job's rungs; `output` and `settings` are then its first rung's.
    public var ladder: PlannedLadder?
    /// The job is audited: its tasks ask for encodes that repeat their bytes whatever the worker's threads.
    public var repeatable = false

    public var inputPath: String { probe.path }

    /// Output frames of segment `k`: its source frames, or the constant-rate ticks in its span.
    public func outputFrames(_ k: Int) -> Int {
        let segment = cuts.segments[k]
        guard output.resamplesFrameRate == true else { return segment.frameCount }
        return output.outputTicks(start: segment.startPTS, end: segment.endPTS, sourceTimeBase: cuts.timeBase).count
    }

    /// Frames the output holds.
    public var outputFrameCount: Int { cuts.segments.indices.reduce(0) { $0 + outputFrames($1) } }

    /// The output's first and end timestamps, in the output time base.
    public var outputSpan: Range<Int64> {
        output.outputTicks(start: cuts.firstPTS, end: cuts.endPTS, sourceTimeBase: cuts.timeBase)
    }

    public var outputDurationSeconds: Double {
        output.timeBase.seconds(outputSpan.upperBound - outputSpan.lowerBound)
    }

    /// The frames after segment `segment` its worker shows the encoder past the end. None when the
    /// frame rate is resampled: there the encoder is fed ticks, not source frames.
    public func runOut(after segment: PlannedSegment) -> RunOut? {
        // libx264's second pass takes exactly the first pass's frames: no run-out in two passes.
        guard output.resamplesFrameRate != true, !settings.twoPass else { return nil }
        return RunOut.after(segment, packets: probe.packets, frames: settings.lookaheadFrames)
    }

    /// Flat frames segment `segment`'s encoder sees before its first frame: none for the first segment,
    /// which starts where a whole-file encode starts. A ladder's rungs are capped CRF but get the lead-in of
    /// the job's CRF: without it their IDRs came out at half a whole-file encode's size (docs/architecture.md).
    public func leadIn(of segment: PlannedSegment) -> Int? {
        var warmed = settings
        if ladder != nil {
            warmed.maxrate = nil
            warmed.bufsize = nil
        }
        let frames = segment.index == 0 ? 0 : warmed.leadInFrames
        return frames > 0 ? frames : nil
    }

    /// Segment `segment`'s payload from its packets (run-out included).
    func task(_ segment: PlannedSegment, _ runOut: RunOut?, packets: [MediaPacket]) -> SegmentTask {
        SegmentTask(jobID: jobID, segment: segment, timeBase: probe.video.timeBase, codec: probe.video.parameters,
                    output: output, settings: settings, runOut: runOut, leadIn: leadIn(of: segment), pass: pass(of: segment),
                    sceneCuts: sceneCuts(of: segment), rungs: rungEncodings(of: segment), forcedKeyframes: forcedKeyframes(of: segment),
                    repeatable: repeatable ? true : nil, packets: packets)
    }

    /// False for a segment that starts where the whole-file encode puts no IDR (an extra cut) and holds none of
    /// its forecast IDRs: libx264 there would weigh scene cuts by the frames since the segment's own first IDR,
    /// not since the whole file's last one, and in noisy or fast content make IDRs the whole file does not
    /// (see docs/architecture.md). Nil elsewhere: libx264 decides as in the whole file.
    public func sceneCuts(of segment: PlannedSegment) -> Bool? {
        guard segment.index > 0, let keyframes = cuts.forecastKeyframes,
              !keyframes.contains(where: { $0 >= segment.startPTS && $0 < segment.endPTS }) else { return nil }
        return false
    }

    /// What segment `segment`'s task says of the passes (a ladder's first rung's): nil in one pass.
    public func pass(of segment: PlannedSegment) -> PassInput? { passes(of: segment)?.first }

    /// Segment `segment`'s pass for each output, a ladder's rungs in order: nil in one pass.
    public func passes(of segment: PlannedSegment) -> [PassInput]? {
        guard settings.twoPass else { return nil }
        if let secondPass {
            let recorded = secondPass[segment.index] ?? []
            return (0..<rungCount).map { recorded.indices.contains($0) ? recorded[$0] : PassInput(pass: 2) }
        }
        return (0..<rungCount).map { PassInput(pass: 1, bitrate: forRung($0).firstPassBitrate(segment)) }
    }

    /// Segment `segment`'s first-pass bitrate, from the source's bits over it against its bits over the file; at most
    /// the VBV's maximum rate.
    func firstPassBitrate(_ segment: PlannedSegment) -> Int? {
        guard let bitrate = settings.bitrate else { return nil }
        let packets = probe.packets
        let first = segment.firstPacket + segment.preRollPackets
        guard first <= segment.lastPacket, segment.lastPacket < packets.count else { return bitrate }
        let own = packets[first...segment.lastPacket].reduce(0) { $0 + $1.size }
        let rate = BitAllocation.firstPassBitrate(bitrate, sourceBytes: own, seconds: cuts.timeBase.seconds(segment.endPTS - segment.startPTS),
                                                  fileSourceBytes: packets.reduce(0) { $0 + $1.size }, fileSeconds: cuts.durationSeconds)
        return min(rate, settings.maxrate ?? rate)
    }

    /// The input opened again; `headerOnly`: its header taken for what the probe found (to read packets).
    func reopenInput(headerOnly: Bool = false) throws(TesseraError) -> MediaInput {
        try checkInput()
        let input: MediaInput
        do {
            input = try probe.openInput(probedStreams: headerOnly ? probe.streams.count : nil, etag: inputIdentity?.etag)
        } catch {
            throw .input(inputPath, "cannot reopen (\(error.message))")
        }
        // Replaced while it was being opened: what was opened may be either file.
        try checkInput()
        return input
    }
}

public struct JobOptions: Sendable {
    public var settings: EncoderSettings
    public var audio: AudioSettings
    public var picture: PictureSettings
    /// Segment length as asked for; nil: cut where a whole-file encode puts IDR frames.
    public var segmentSeconds: Double?
    /// Parallel encoders the plan should keep busy.
    public var workers: Int
    public var maxPreRollRatio: Double
    /// The cluster's load when the job is planned (see `SegmentationRule`); nil: plan as if it were idle.
    public var load: ClusterLoad?
    public var segmentation = SegmentationRule()
    /// A rendition ladder to make instead of one output.
    public var ladder: LadderSpec?

    public init(settings: EncoderSettings = EncoderSettings(), audio: AudioSettings = AudioSettings(),
                picture: PictureSettings = PictureSettings(), segmentSeconds: Double? = nil, workers: Int = 1,
                maxPreRollRatio: Double = 1.5) {
        self.settings = settings
        self.audio = audio
        self.picture = picture
        self.segmentSeconds = segmentSeconds
        self.workers = workers
        self.maxPreRollRatio = maxPreRollRatio
    }

    /// The options of a stored job.
    public init(spec: JobSpec, workers: Int = 1) {
        self.init(settings: spec.settings, audio: spec.audio, picture: spec.picture, segmentSeconds: spec.segmentSeconds,
                  workers: workers)
        ladder = spec.ladder
    }
}

public enum JobPlanner {
    public static func plan(_ probe: ProbeResult, options: JobOptions, jobID: String = "local") throws(TesseraError) -> JobPlan {
        var settings = options.settings
        do {
            try settings.validate()
            try options.audio.validate()
            try options.picture.validate()
        } catch {
            throw TesseraError(.settings, "", error.description)
        }
        if let seconds = options.segmentSeconds, !(seconds > 0) { throw TesseraError(.settings, "", "--segment-seconds must be positive") }

        let video = probe.video
        let frameRate = video.averageFrameRate.isValid ? video.averageFrameRate : video.realFrameRate
        let planner: CutPlanner
        do {
            planner = try CutPlanner(packets: probe.packets, timeBase: video.timeBase, frameRate: frameRate.isValid ? frameRate : nil)
        } catch {
            throw .input(probe.path, error.description)
        }
        let sourceRate = frameRate.isValid ? frameRate : Rational(Int32((planner.framesPerSecond * 1000).rounded()), 1000)
        let output = try OutputPicture.format(probe, options.picture, settings, sourceRate: sourceRate)
        let fps = output.frameRate.doubleValue

        // Keyframe interval: the encoder's own for the output's rate when none was given (SVT-AV1; a ladder's rungs
        // keep 250, their packaging segments open on key frames), then frames or seconds, whichever comes first.
        if settings.encoderKeyint == true, options.ladder == nil, let keyint = settings.videoCodec.defaultKeyint(framesPerSecond: fps) {
            settings.keyint = keyint
        }
        if let seconds = settings.keyintSeconds {
            settings.keyint = max(1, min(settings.keyint, Int((seconds * fps).rounded())))
        }
        // The planner counts source frames; whole GOPs of the output's.
        let keyintInSourceFrames = max(1, Int((Double(settings.keyint) * planner.framesPerSecond / max(fps, 0.001)).rounded()))
        var planOptions = PlanOptions(segmentSeconds: options.segmentSeconds, keyint: keyintInSourceFrames,
                                      minimumSegments: max(1, options.workers * 2),
                                      maxPreRollRatio: options.maxPreRollRatio)
        planOptions.encoders = options.workers
        // x264's ultrafast places no scene cuts; nor does SVT-AV1 through libavcodec 5.1 (scene detection off): its
        // whole-file key frames are its interval's cadence alone, which the cuts then follow.
        planOptions.detectsScenes = settings.preset != "ultrafast" && settings.videoCodec != .av1
        planOptions.bframes = settings.effectiveBFrames
        planOptions.constantQuality = settings.bitrate == nil
        if planOptions.segmentSeconds == nil, let load = options.load {
            let pixels = Double(output.width) * Double(output.height)
            planOptions.segmentation = options.segmentation.segments(seconds: Double(planner.frameCount) / planner.framesPerSecond,
                                                                     work: Double(planner.frameCount) * pixels, load: load)
        }
        var probe = probe
        probe.sceneAnalysisSeconds = 0
        if let spec = options.ladder {
            // Every rung cuts on one grid; the encoder places its own scene cuts inside each segment. SVT-AV1 takes no
            // forced keyframe, so an AV1 ladder's segments are its packaging segments, each opening on its encode's first frame.
            let ladder = try planLadder(spec, probe: probe, picture: options.picture, settings: settings, sourceRate: sourceRate)
            let cuts = planner.planOnGrid(seconds: spec.segmentSeconds, planOptions, segmentPerCut: settings.videoCodec == .av1)
            var plan = JobPlan(jobID: jobID, probe: probe, cuts: cuts,
                               output: ladder.rungs[0].output, settings: ladder.rungs[0].settings,
                               audio: try audioPlan(probe, options.audio))
            plan.ladder = ladder
            return plan
        }
        // One segment has no cut to place: no scene analysis.
        if planOptions.segmentSeconds == nil, planOptions.detectsScenes, planOptions.segmentation?.count != 1 {
            if probe.decodedScenes == nil {
                let intervals = planner.sceneAnalysisIntervals(planOptions)
                if !intervals.isEmpty {
                    let found = try SceneAnalysis.run(probe, planner: planner, intervals: intervals,
                                                      picture: (Int(output.width), Int(output.height)), options: planOptions,
                                                      threads: ProcessInfo.processInfo.activeProcessorCount)
                    probe.decodedScenes = found.scenes
                    probe.sceneAnalysisSeconds = found.seconds
                    probe.sceneAnalysisFrames = found.decodedFrames
                }
            }
            planOptions.decodedScenes = probe.decodedScenes
        }
        let cuts = planner.plan(planOptions)

        let width = Int(output.width), height = Int(output.height)
        let vbv = settings.maxrate ?? settings.bitrate
        let refs = 4
        // HEVC's level is x265's choice from the frozen settings, the same in every segment; AV1 takes none.
        if settings.videoCodec != .h264 {
        } else if let name = settings.level {
            let level = H264Level.named(name)!
            if let why = level.violation(width: width, height: height, fps: fps, maxBitrate: vbv,
                                         profile: settings.profile, referenceFrames: 1) {
                throw TesseraError(.settings, "--level \(name)", why)
            }
            settings.level = level.name
        } else {
            guard let level = H264Level.lowest(width: width, height: height, fps: fps, maxBitrate: vbv,
                                               profile: settings.profile, referenceFrames: refs) else {
                throw TesseraError(.settings, probe.path, "\(width)x\(height) at \(fps.formatted3) fps is beyond every H.264 level")
            }
            settings.level = level.name
        }

        return JobPlan(jobID: jobID, probe: probe, cuts: cuts, output: output, settings: settings,
                       audio: try audioPlan(probe, options.audio))
    }

    static func audioPlan(_ probe: ProbeResult, _ audio: AudioSettings) throws(TesseraError) -> JobPlan.AudioPlan {
        guard audio.mode != .none else { return .none }
        let tracks = probe.streams.filter { $0.kind == .audio }
        let chosen: StreamInfo
        if let track = audio.track {
            guard track < tracks.count else {
                throw TesseraError(.settings, "--audio-track \(track)",
                                   "\(probe.path) has \(tracks.count) audio stream\(tracks.count == 1 ? "" : "s") (counted from 0)")
            }
            chosen = tracks[track]
        } else {
            // No audio is no audio, whatever a recipe asked for it.
            guard let best = probe.audio else { return .none }
            chosen = best
        }
        let stream = chosen
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
