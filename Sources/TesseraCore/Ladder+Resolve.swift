/// What a ladder needs to know of the probed source: its stored size and pixel aspect, the quarter turns
/// the job applies (`PictureSettings.quarterTurns`), and the output frame rate.
public struct LadderSource: Hashable, Sendable {
    public var width: Int
    public var height: Int
    /// The stored pixels' aspect; an invalid one (0/1, as FFmpeg reports "unknown") means square.
    public var sampleAspectRatio: Rational
    /// Clockwise quarter turns applied to the stored pixels.
    public var quarterTurns: Int
    /// Output frames per second, for the level's macroblock rate.
    public var fps: Double

    public init(width: Int, height: Int, sampleAspectRatio: Rational = Rational(1, 1), quarterTurns: Int = 0, fps: Double) {
        self.width = width
        self.height = height
        self.sampleAspectRatio = sampleAspectRatio
        self.quarterTurns = quarterTurns
        self.fps = fps
    }

    /// The turns come from the job's `--rotate` and the source's display rotation, as for a single output.
    public init(width: Int, height: Int, sampleAspectRatio: Rational, rotation: Double?, picture: PictureSettings, fps: Double) {
        self.init(width: width, height: height, sampleAspectRatio: sampleAspectRatio,
                  quarterTurns: picture.quarterTurns(sourceRotation: rotation).turns, fps: fps)
    }

    /// The upright picture as shown: rows as stored (turned), columns scaled by the pixel aspect.
    var display: (width: Double, height: Double) {
        let odd = quarterTurns % 2 != 0
        let sar = sampleAspectRatio.isValid ? sampleAspectRatio : Rational(1, 1)
        let uprightWidth = odd ? height : width, uprightHeight = odd ? width : height
        return (Double(uprightWidth) * (odd ? sar.inverse : sar).doubleValue, Double(uprightHeight))
    }

    /// Portrait when shown taller than wide: rungs then name the width.
    public var isPortrait: Bool { display.height > display.width }

    /// The shown shorter side in whole pixels, which rungs are compared with.
    public var shortSide: Int {
        let (width, height) = display
        return Int(min(width, height).rounded())
    }
}

/// One rung made concrete for a source: its size (square pixels), its VBV cap and its level.
public struct ResolvedRung: Hashable, Sendable {
    /// The rung as given, or the source's short side when every rung was above it.
    public var rung: Ladder.Rung
    public var width: Int
    public var height: Int
    /// Capped CRF: `maxrate` is the rung's peak rate, `bufsize` twice that (two seconds at the cap). Two passes:
    /// `maxrate` twice the average (a VOD peak at most 200 % of it, as Apple's HLS authoring guidance asks).
    public var maxrate: Int
    public var bufsize: Int
    /// Whether the rung's rate comes from `Ladder.defaultPeakRate` rather than the rung.
    public var rateIsDefault: Bool
    /// The level the rung's encoder is pinned to: H.264's or HEVC's; nil for AV1, whose level SVT-AV1 derives from
    /// the rung's size, frame rate and cap (libavcodec 5.1 passes it no level).
    public var level: RungLevel?
    /// Two passes (`--two-pass`): the rung's rate as its average bitrate; nil in capped CRF.
    public var averageRate: Int?

    /// `720p`: the rung's folder in HLS/DASH output.
    public var name: String { rung.name }

    /// The job's settings for this rung: its VBV cap and level, the rest shared by every rung.
    public func settings(from job: EncoderSettings) -> EncoderSettings {
        var settings = job
        settings.maxrate = maxrate
        settings.bufsize = bufsize
        settings.level = level?.name
        if let averageRate {
            settings.bitrate = averageRate
            settings.crf = nil
            settings.passes = 2
        }
        return settings
    }
}

/// A ladder resolved against a source: the rungs to encode and those dropped as above the source.
public struct ResolvedLadder: Hashable, Sendable {
    public var rungs: [ResolvedRung]
    /// Rungs above the source's short side, in the order given: never upscaled.
    public var dropped: [Ladder.Rung]
    /// Every rung was above the source, so the ladder is one rung at the source's short side.
    public var fellBackToSource: Bool
    public var sourceShortSide: Int
    public var sourceIsPortrait: Bool

    /// One line for the user when rungs were dropped (`--ladder: dropped 1080 and 720: above the source's
    /// 480 rows`), nil otherwise.
    public var notice: String? {
        guard !dropped.isEmpty else { return nil }
        let names = dropped.map { String($0.height) }
        let list = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1]
        let side = sourceIsPortrait ? "columns" : "rows"
        var line = "--ladder: dropped \(list): above the source's \(sourceShortSide) \(side)"
        if fellBackToSource, let only = rungs.first { line += "; one rung at \(only.width)x\(only.height) instead" }
        return line
    }
}

extension Ladder {
    /// The options a ladder replaces, refused beside it with one line naming them.
    public static func checkCompatible(settings: EncoderSettings, picture: PictureSettings) throws(LadderError) {
        if picture.size != nil || picture.maxSize != nil {
            throw LadderError(.conflictingOption, "--ladder sets each rung's size; drop --size and --max-size")
        }
        if settings.bitrate != nil {
            throw LadderError(.conflictingOption,
                              "--ladder takes each rung's rate (720:3M), in capped CRF or as its average with --two-pass; drop --bitrate")
        }
        if settings.maxrate != nil || settings.bufsize != nil {
            throw LadderError(.conflictingOption, "--ladder caps each rung itself; give a rung its rate (720:3M) instead of --maxrate/--bufsize")
        }
    }

    /// The rungs for `source`. Rungs above its short side are dropped; when all are, the ladder becomes one
    /// rung at the source's short side (even), so that a small source still gets an output, with the rate of
    /// the smallest dropped rung if it named one. Each rung keeps the shown aspect ratio with square pixels,
    /// its long side rounded to even and never beyond the source's. The level is the lowest that carries the
    /// rung, or `settings.level` when pinned, which a rung beyond it is refused for. `twoPass`: each rung's rate
    /// is its average, its VBV cap twice that.
    public func resolve(for source: LadderSource, settings: EncoderSettings, picture: PictureSettings,
                        twoPass: Bool = false) throws(LadderError) -> ResolvedLadder {
        try Self.checkCompatible(settings: settings, picture: picture)
        let shortSide = source.shortSide
        var kept = rungs.filter { $0.height <= shortSide }
        let dropped = rungs.filter { $0.height > shortSide }
        let fellBack = kept.isEmpty
        if fellBack {
            let smallest = rungs.min { $0.height < $1.height }
            kept = [Rung(height: max(2, shortSide & ~1), peakRate: smallest?.peakRate)]
        }
        var resolved: [ResolvedRung] = []
        for rung in kept { resolved.append(try Self.resolve(rung, source, settings, twoPass: twoPass)) }
        return ResolvedLadder(rungs: resolved, dropped: dropped, fellBackToSource: fellBack, sourceShortSide: shortSide,
                              sourceIsPortrait: source.isPortrait)
    }

    static func resolve(_ rung: Rung, _ source: LadderSource, _ settings: EncoderSettings, twoPass: Bool) throws(LadderError) -> ResolvedRung {
        let display = source.display
        let longSide = max(display.width, display.height), shortSide = min(display.width, display.height)
        // The long side: nearest even to the aspect ratio's, at most the source's own (rounded down to even).
        let long = max(2, min(Int((Double(rung.height) * longSide / shortSide / 2).rounded()) * 2, Int(longSide) & ~1))
        let (width, height) = source.isPortrait ? (rung.height, long) : (long, rung.height)
        let rate = rung.peakRate ?? defaultPeakRate(pixels: width * height)
        let maxrate = twoPass ? 2 * rate : rate
        let what = "\(width)x\(height) at \(source.fps.formatted3) fps, \(Rung.rateText(maxrate))b/s"
        let level: RungLevel?
        switch settings.videoCodec {
        case .h264: level = RungLevel(name: try h264Level(rung, width, height, maxrate, source, settings, what).name)
        case .hevc: level = RungLevel(name: try hevcLevel(rung, width, height, maxrate, source, settings, what).name)
        case .av1: level = nil
        }
        return ResolvedRung(rung: rung, width: width, height: height, maxrate: maxrate, bufsize: 2 * maxrate,
                            rateIsDefault: rung.peakRate == nil, level: level, averageRate: twoPass ? rate : nil)
    }

    /// The lowest H.264 level that carries the rung, or the pinned one if it does.
    static func h264Level(_ rung: Rung, _ width: Int, _ height: Int, _ maxrate: Int, _ source: LadderSource,
                          _ settings: EncoderSettings, _ what: String) throws(LadderError) -> H264Level {
        let level: H264Level
        if let name = settings.level, let pinned = H264Level.named(name) {
            // As for a single output: a pinned level is checked with one reference frame, the least x264 uses.
            if let why = pinned.violation(width: width, height: height, fps: source.fps, maxBitrate: maxrate,
                                          profile: settings.profile, referenceFrames: 1) {
                throw LadderError(.exceedsLevel, "--ladder rung \(rung.height) (\(what)) does not fit --level \(pinned.name): \(why)")
            }
            level = pinned
        } else {
            guard let lowest = H264Level.lowest(width: width, height: height, fps: source.fps, maxBitrate: maxrate,
                                                profile: settings.profile) else {
                throw LadderError(.beyondLevels, "--ladder rung \(rung.height) (\(what)) is beyond every H.264 level")
            }
            level = lowest
        }
        return level
    }

    /// The lowest HEVC level whose Main tier carries the rung and its VBV buffer, or the pinned one if it does.
    static func hevcLevel(_ rung: Rung, _ width: Int, _ height: Int, _ maxrate: Int, _ source: LadderSource,
                          _ settings: EncoderSettings, _ what: String) throws(LadderError) -> HEVCLevel {
        if let name = settings.level, let pinned = HEVCLevel.named(name) {
            if let why = pinned.violation(width: width, height: height, fps: source.fps, maxBitrate: maxrate, bufferSize: 2 * maxrate) {
                throw LadderError(.exceedsLevel, "--ladder rung \(rung.height) (\(what)) does not fit --level \(pinned.name): \(why)")
            }
            return pinned
        }
        guard let lowest = HEVCLevel.lowest(width: width, height: height, fps: source.fps, maxBitrate: maxrate, bufferSize: 2 * maxrate) else {
            throw LadderError(.beyondLevels, "--ladder rung \(rung.height) (\(what)) is beyond every HEVC level")
        }
        return lowest
    }
}

/// A ladder rung's level as its encoder takes it (`4.1`).
public struct RungLevel: Hashable, Sendable {
    public var name: String
}
