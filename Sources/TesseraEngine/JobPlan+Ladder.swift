import TesseraCore

/// A ladder job's rungs as planned for its source: what each is encoded with, and how they are packaged.
public struct PlannedLadder: Sendable {
    public var spec: LadderSpec
    public var resolved: ResolvedLadder
    /// Per rung, in the ladder's order: the picture and the settings (cap and level) its encoder gets.
    public var rungs: [SegmentTask.RungEncoding]

    public var names: [String] { resolved.rungs.map(\.name) }
}

extension JobPlan {
    /// Rung `r` of a ladder job as a job of its own: its picture and settings in place of the first rung's.
    public func forRung(_ r: Int) -> JobPlan {
        guard let ladder else { return self }
        var plan = self
        plan.output = ladder.rungs[r].output
        plan.settings = ladder.rungs[r].settings
        plan.ladder = nil
        return plan
    }

    /// Outputs the job makes: its rungs, or one.
    public var rungCount: Int { ladder?.rungs.count ?? 1 }

    /// A ladder task's rungs for segment `segment`, each with its own pass in two passes; nil for one output.
    func rungEncodings(of segment: PlannedSegment) -> [SegmentTask.RungEncoding]? {
        guard var rungs = ladder?.rungs else { return nil }
        if let passes = passes(of: segment) {
            for r in rungs.indices { rungs[r].pass = passes[r] }
        }
        return rungs
    }

    /// The packaging cuts in output ticks (`output.timeBase`), on the encoded packets' clock: where every rung
    /// has an IDR and the CMAF writer starts a media segment.
    public var packagingCutTicks: [Int64] {
        (cuts.packagingCuts ?? []).map { output.outputTicks(start: $0, end: $0, sourceTimeBase: cuts.timeBase).lowerBound }
    }

    /// The packaging cuts inside segment `segment` (its own start excluded): IDRs its encoders are told to make.
    public func forcedKeyframes(of segment: PlannedSegment) -> [Int64]? {
        guard ladder != nil else { return nil }
        let span = output.outputTicks(start: segment.startPTS, end: segment.endPTS, sourceTimeBase: cuts.timeBase)
        let inside = packagingCutTicks.filter { $0 > span.lowerBound && $0 < span.upperBound }
        return inside.isEmpty ? nil : inside
    }

    /// The SPS/PPS every result of the job must carry: one output's headers, or a ladder's combined.
    public func encoderHeaders() throws(TesseraError) -> [UInt8] {
        guard let ladder else { return try SegmentEncoder.headers(output, settings) }
        var headers: [[UInt8]] = []
        for rung in ladder.rungs { headers.append(try SegmentEncoder.headers(rung.output, rung.settings)) }
        return EncodedSegment.RungHeaders.combined(headers)
    }

    /// Pixels per output frame, all rungs together: the work one frame asks for.
    public var framePixels: Int {
        ladder?.rungs.reduce(0) { $0 + Int($1.output.width) * Int($1.output.height) } ?? Int(output.width) * Int(output.height)
    }
}

extension JobPlanner {
    /// Resolves `spec` for the probed source: the rungs kept (never above the source), each one's picture at its size
    /// and its settings with its cap and level. Errors are the ladder's own line.
    static func planLadder(_ spec: LadderSpec, probe: ProbeResult, picture: PictureSettings, settings: EncoderSettings,
                           sourceRate: Rational) throws(TesseraError) -> PlannedLadder {
        guard spec.segmentSeconds > 0, spec.segmentSeconds.isFinite else {
            throw TesseraError(.settings, "--hls-time", "must be a positive number of seconds")
        }
        let full = try OutputPicture.format(probe, picture, settings, sourceRate: sourceRate)
        let source = LadderSource(probe, picture: picture, fps: full.frameRate.doubleValue)
        let resolved: ResolvedLadder
        do {
            resolved = try spec.ladder.resolve(for: source, settings: settings, picture: picture, twoPass: spec.twoPass)
        } catch {
            // The ladder's line names the option itself.
            throw TesseraError(.settings, "", error.description)
        }
        var rungs: [SegmentTask.RungEncoding] = []
        for rung in resolved.rungs {
            var sized = picture
            sized.size = FrameSize(width: rung.width, height: rung.height)
            rungs.append(.init(output: try OutputPicture.format(probe, sized, settings, sourceRate: sourceRate),
                               settings: rung.settings(from: settings)))
        }
        return PlannedLadder(spec: spec, resolved: resolved, rungs: rungs)
    }
}
