import TesseraCore

/// One rendition's CMAF files as written: an init segment and its media segments, with what playlists and
/// manifests need of each (names, sizes, exact timing, the I-frame byte range). Paths are relative to `directory`.
public struct CMAFRendition: Codable, Hashable, Sendable {
    public enum Content: String, Codable, Hashable, Sendable {
        case video, audio, videoAndAudio
    }

    public var directory: String
    public var content: Content
    public var initSegment: String
    public var initBytes: Int
    /// The time base of every tick count below: the track's media time scale in the files.
    public var timeBase: Rational
    public var segments: [CMAFSegment]

    public var durationSeconds: Double { segments.reduce(0) { $0 + $1.durationSeconds } }
    public var path: String { directory.hasSuffix("/") ? directory + initSegment : directory + "/" + initSegment }
    public func path(of segment: CMAFSegment) -> String {
        directory.hasSuffix("/") ? directory + segment.file : directory + "/" + segment.file
    }
}

/// One media segment file (moof + mdat). Times are on the common timeline of every rendition of the job.
public struct CMAFSegment: Codable, Hashable, Sendable {
    public var file: String
    public var bytes: Int
    /// Presentation start (the cut time; the first segment's earliest pts) and length, exact, in ticks.
    public var startTicks: Int64
    public var durationTicks: Int64
    public var durationSeconds: Double
    /// Earliest and latest presentation timestamp of the segment's (video, else audio) samples.
    public var firstPTS: Int64
    public var lastPTS: Int64
    /// The fragment's `tfdt` (decode time of its first sample).
    public var decodeTicks: Int64
    /// The moof through the end of the first IDR's data: an `#EXT-X-BYTERANGE` of an I-frame playlist
    /// (video segments only).
    public var iFrame: ByteRange?
}

/// The one origin subtracted from every timestamp of every rendition (video and audio alike), so that they
/// share a timeline starting at 0: the earliest decode time of either stream.
public struct CMAFTimeline: Codable, Hashable, Sendable {
    public var videoTimeBase: Rational
    public var videoOrigin: Int64
    public var audioTimeBase: Rational?
    public var audioOrigin: Int64?

    public init(videoTimeBase: Rational, videoOrigin: Int64, audioTimeBase: Rational? = nil, audioOrigin: Int64? = nil) {
        self.videoTimeBase = videoTimeBase
        self.videoOrigin = videoOrigin
        self.audioTimeBase = audioTimeBase
        self.audioOrigin = audioOrigin
    }

    /// The timeline for video whose first packet decodes at `videoFirstDTS` and the audio's first packet
    /// (AAC priming included). The later stream's origin is the earlier's, rounded down, so nothing goes below 0.
    public static func common(videoFirstDTS: Int64, videoTimeBase: Rational, audio: AudioTrack?) -> CMAFTimeline {
        guard let audio, let first = audio.packets.first, let audioFirst = first.dts ?? first.pts else {
            return CMAFTimeline(videoTimeBase: videoTimeBase, videoOrigin: videoFirstDTS)
        }
        let atb = audio.timeBase
        if atb.seconds(audioFirst) < videoTimeBase.seconds(videoFirstDTS) {
            return CMAFTimeline(videoTimeBase: videoTimeBase, videoOrigin: floorRescale(audioFirst, atb, videoTimeBase),
                                audioTimeBase: atb, audioOrigin: audioFirst)
        }
        return CMAFTimeline(videoTimeBase: videoTimeBase, videoOrigin: videoFirstDTS,
                            audioTimeBase: atb, audioOrigin: floorRescale(videoFirstDTS, videoTimeBase, atb))
    }

    /// `value` ticks of `from` in ticks of `to`, rounded towards minus infinity.
    static func floorRescale(_ value: Int64, _ from: Rational, _ to: Rational) -> Int64 {
        let numerator = Int128(value) * Int128(from.num) * Int128(to.den)
        let denominator = Int128(from.den) * Int128(to.num)
        let quotient = numerator / denominator
        return Int64(clamping: numerator % denominator != 0 && numerator < 0 ? quotient - 1 : quotient)
    }
}
