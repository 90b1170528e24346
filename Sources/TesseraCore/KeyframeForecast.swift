/// Scene changes found by decoding (`SceneAnalysis`), in display positions: within each examined interval
/// (from its first keyframe, exclusive, through its last), these are all there are.
public struct DecodedScenes: Codable, Hashable, Sendable {
    public var examined: [ClosedRange<Int>]
    /// Certain scene changes (an analysis before the lookahead estimate kept only these).
    public var cuts: [Int]
    /// The lookahead estimate of each examined frame that could pass libx264's scene-cut test.
    public var changes: [SceneChange]?
    /// Whether most frames estimated cost a high share of their intra cost (grain, sensor noise): there an
    /// extra cut moved its segment's size and quality apart from the whole-file encode's (-1.5 % and
    /// -0.04 dB each on the grain test clip), which the cost of an IDR does not count.
    public var grain: Bool?

    public init(examined: [ClosedRange<Int>], cuts: [Int], changes: [SceneChange]? = nil) {
        self.examined = examined
        self.cuts = cuts
        self.changes = changes
    }

    /// `claims` (scene changes read from keyframes) with what decoding found in place of those it examined.
    public func correcting(_ claims: [Int]) -> [Int] {
        let kept = claims.filter { claim in !examined.contains { $0.lowerBound < claim && claim <= $0.upperBound } }
        return Array(Set(kept + cuts)).sorted()
    }

    /// Every frame that may be a scene change, by display position: `claims` outside the examined intervals
    /// and the certain cuts as certain, with the estimates found.
    public func changes(claims: [Int]) -> [Int: SceneChange] {
        var all = SceneChange.certain(at: correcting(claims))
        for change in changes ?? [] { all[change.frame] = change }
        return all
    }
}

/// libx264's lookahead estimate of one frame, as its scene-cut test reads it: the frame's cost predicted from
/// the frame before, and the next frame's cost predicted from that same frame (skipping this one), each as a
/// share of the predicted frame's intra cost (1: prediction saves nothing).
public struct SceneChange: Codable, Hashable, Sendable {
    public var frame: Int
    public var change: Double
    public var skipping: Double

    public init(frame: Int, change: Double, skipping: Double) {
        self.frame = frame
        self.change = change
        self.skipping = skipping
    }

    /// Nil or false: measured. True: not measured, taken to pass the test (the frame after a run of frames
    /// that all may pass, where the analysis stopped), which keeps the frame before it from being a cut.
    public var unmeasured: Bool?

    /// A change every test passes (a source keyframe at a scene cut).
    public static func certain(_ frame: Int) -> SceneChange { SceneChange(frame: frame, change: 1, skipping: 1) }

    /// Certain changes at `frames`, by frame.
    public static func certain(at frames: [Int]) -> [Int: SceneChange] {
        Dictionary(frames.map { ($0, certain($0)) }) { a, _ in a }
    }

    /// A frame taken to pass, never a cut itself.
    public static func unmeasured(_ frame: Int) -> SceneChange {
        var change = SceneChange(frame: frame, change: 1, skipping: 1)
        change.unmeasured = true
        return change
    }

    /// The least share that can pass: libx264's bias never exceeds its `scenecut` threshold, 40 %.
    public static let least = 0.6
}

/// Where one whole-file libx264 encode of a stream would put its IDR frames, forecast without decoding:
/// every cut elsewhere costs an IDR that encode would not have made.
///
/// libx264 makes an IDR at a scene change at least `keyint-min` frames after the last one, and otherwise
/// `keyint` frames after it. Scene changes come from the source's own keyframes: an encoder that places
/// them at scene changes (x264, x265, libvpx, libaom and most software encoders) leaves keyframe intervals
/// of every length, while a fixed cadence (cameras, hardware and broadcast encoders) repeats its longest
/// interval and says nothing about scenes. Such sources get x264's cadence alone: scene changes inside a
/// segment are still found by the segment's own encoder, as a whole-file encode finds them.
public struct KeyframeForecast: Codable, Hashable, Sendable {
    /// Display positions of the source's scene-change keyframes.
    public var sceneCuts: [Int]
    /// Display positions of the forecast IDR frames, from 0.
    public var keyframes: [Int]

    public init(sceneCuts: [Int], keyframes: [Int]) {
        self.sceneCuts = sceneCuts
        self.keyframes = keyframes
    }

    /// The source's scene-change keyframes among its random-access points (display positions, sorted,
    /// 0 first when shown): those not at the interval its encoder repeats as its cadence, unless that
    /// cadence is the output's own `keyint`.
    public static func sceneCuts(randomAccessPoints points: [Int], keyint: Int) -> [Int] {
        guard points.count >= 2 else { return [] }
        let intervals = zip(points, points.dropFirst()).map { $1 - $0 }
        let longest = intervals.max()!
        // Intra-only and all-keyframe streams: nothing to read.
        guard longest > 1 else { return [] }
        // A cadence is the longest interval, repeated (a scene longer than the cadence ends at it).
        let cadence = intervals.filter { abs($0 - longest) <= 1 }.count >= 2 ? longest : nil
        return zip(points.dropFirst(), intervals).compactMap { point, interval in
            guard let cadence, abs(interval - cadence) <= 1, abs(cadence - keyint) > 1 else { return point }
            return nil
        }
    }

    /// x264's IDR frames for `frames` shown frames with scene changes at `sceneCuts`: each scene change at
    /// least `minimumInterval` after the last IDR, and every `keyint` frames in between. With
    /// `detectsScenes` false (x264's ultrafast preset), the cadence alone.
    public static func keyframes(frames: Int, sceneCuts: [Int], keyint: Int, minimumInterval: Int, detectsScenes: Bool = true) -> [Int] {
        replay(frames: frames, changes: SceneChange.certain(at: sceneCuts),
               keyint: keyint, minimumInterval: minimumInterval, flashes: false, detectsScenes: detectsScenes).keyframes
    }

    /// libx264's keyframe decisions over `frames` shown frames: a frame is a scene cut when its predicted cost
    /// is at least (1 − bias) of its intra cost, the bias growing with the distance from the last IDR (a
    /// tenth of the 40 % threshold up to `minimumInterval`, then up to 40 % at `keyint`); with B-frames
    /// (`flashes`), not when the frame after it looks like the frame before it (a flash) or cuts away again
    /// (a passing scene). A scene cut at least `minimumInterval` after the last IDR is an IDR; `keyint`
    /// frames after one, the next frame is. Frames without an estimate are no scene cut.
    public static func replay(frames: Int, changes: [Int: SceneChange], keyint: Int, minimumInterval: Int,
                              flashes: Bool, detectsScenes: Bool = true) -> KeyframeForecast {
        let keyint = max(1, keyint)
        let minimum = max(1, min(minimumInterval, keyint))
        func passes(_ share: Double, _ gop: Int) -> Bool { share >= 1 - bias(gop, keyint: keyint, minimum: minimum) }
        var idrs = [0], cuts: [Int] = [], last = 0
        let candidates = detectsScenes ? changes.filter { $0.key > 0 && $0.key < frames && $0.value.unmeasured != true }.keys.sorted() : []
        for frame in candidates {
            while frame - last > keyint {
                last += keyint
                idrs.append(last)
            }
            let change = changes[frame]!, gop = frame - last
            guard gop == keyint || passes(change.change, gop) else { continue }
            // The lookahead sees no further than the frame before the next forced IDR: there, no flash test.
            // With B-frames the lookahead needs a frame after a scene cut: the stream's last frame is none.
            if flashes, frame == frames - 1 { continue }
            if gop < keyint - 1, flashes {
                guard passes(change.skipping, gop + 1) else { continue }
                if let next = changes[frame + 1], passes(next.change, gop + 1) { continue }
                // The frame after a one-frame flash returns to the picture before it.
                if let flash = changes[frame - 1], gop > 1, passes(flash.change, gop - 1), !passes(flash.skipping, gop) { continue }
            }
            if gop < keyint { cuts.append(frame) }
            if gop >= minimum {
                last = frame
                if idrs.last != frame { idrs.append(frame) }
            }
        }
        while last + keyint < frames {
            last += keyint
            idrs.append(last)
        }
        return KeyframeForecast(sceneCuts: cuts, keyframes: idrs)
    }

    /// libx264's scene-cut bias `gop` frames after the last IDR, at its default threshold of 40 %.
    static func bias(_ gop: Int, keyint: Int, minimum: Int) -> Double {
        let high = 0.4, low = minimum == keyint ? high : high / 4
        if gop <= minimum / 4 { return low / 4 }
        if gop <= minimum { return low * Double(gop) / Double(minimum) }
        return low + (high - low) * Double(gop - minimum) / Double(max(1, keyint - minimum))
    }
}
