/// Scene changes found by decoding (`SceneAnalysis`), in display positions: within each examined interval
/// (from its first keyframe, exclusive, through its last), these are all there are.
public struct DecodedScenes: Codable, Hashable, Sendable {
    public var examined: [ClosedRange<Int>]
    public var cuts: [Int]

    public init(examined: [ClosedRange<Int>], cuts: [Int]) {
        self.examined = examined
        self.cuts = cuts
    }

    /// `claims` (scene changes read from keyframes) with what decoding found in place of those it examined.
    public func correcting(_ claims: [Int]) -> [Int] {
        let kept = claims.filter { claim in !examined.contains { $0.lowerBound < claim && claim <= $0.upperBound } }
        return Array(Set(kept + cuts)).sorted()
    }
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
        let keyint = max(1, keyint)
        var idrs = [0], last = 0
        for cut in detectsScenes ? sceneCuts : [] where cut > last && cut < frames {
            while cut - last > keyint {
                last += keyint
                idrs.append(last)
            }
            if cut - last >= minimumInterval {
                last = cut
                if idrs.last != cut { idrs.append(cut) }
            }
        }
        while last + keyint < frames {
            last += keyint
            idrs.append(last)
        }
        return idrs
    }
}
