import Foundation

/// What mse.html saw: the video element's playback quality, its buffered ranges, where playback stopped, and the
/// first error (an append refused, a media error, a stall, a missing segment).
package struct PlaybackReport: Decodable, Sendable, CustomStringConvertible {
    package struct MediaError: Decodable, Sendable {
        package var code: Int
        package var message: String
    }

    /// Appends that completed (init and media segments).
    package var appended: Int
    /// The first error, as the page wrote it; nil when playback reached the end.
    package var error: String?
    /// `MediaSource.isTypeSupported` for each MIME type of the plan.
    package var supported: [String: Bool]
    /// The SourceBuffer's ranges after every append and `endOfStream` (nil when an append failed).
    package var bufferedAfterAppends: [ClosedRange<Double>]?
    /// The audio SourceBuffer's ranges after its appends (nil without audio).
    package var audioBufferedAfterAppends: [ClosedRange<Double>]?
    /// The video element's ranges when the report was made (where every SourceBuffer has data).
    package var bufferedAtEnd: [ClosedRange<Double>]
    package var totalVideoFrames: Int
    package var droppedVideoFrames: Int
    package var corruptedVideoFrames: Int
    package var currentTime: Double
    /// The media duration (nil while it was unknown).
    package var duration: Double?
    package var ended: Bool
    package var mediaError: MediaError?
    /// Time from the page's start to its report (fetches, appends, playback).
    package var seconds: Double
    /// Time from launching Chromium to the report arriving.
    package var wallSeconds: Double = 0

    enum CodingKeys: String, CodingKey {
        case appended, error, supported, bufferedAfterAppends, audioBufferedAfterAppends, bufferedAtEnd, totalVideoFrames, droppedVideoFrames
        case corruptedVideoFrames, currentTime, duration, ended, mediaError, seconds
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func ranges(_ key: CodingKeys) throws -> [ClosedRange<Double>]? {
            try container.decodeIfPresent([[Double]].self, forKey: key).map { pairs in
                try pairs.map { pair in
                    guard pair.count == 2, pair[0] <= pair[1] else {
                        throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "range \(pair)")
                    }
                    return pair[0]...pair[1]
                }
            }
        }
        appended = try container.decode(Int.self, forKey: .appended)
        error = try container.decodeIfPresent(String.self, forKey: .error)
        supported = try container.decode([String: Bool].self, forKey: .supported)
        bufferedAfterAppends = try ranges(.bufferedAfterAppends)
        audioBufferedAfterAppends = try ranges(.audioBufferedAfterAppends)
        bufferedAtEnd = try ranges(.bufferedAtEnd) ?? []
        totalVideoFrames = try container.decode(Int.self, forKey: .totalVideoFrames)
        droppedVideoFrames = try container.decode(Int.self, forKey: .droppedVideoFrames)
        corruptedVideoFrames = try container.decode(Int.self, forKey: .corruptedVideoFrames)
        currentTime = try container.decode(Double.self, forKey: .currentTime)
        duration = try container.decodeIfPresent(Double.self, forKey: .duration)
        ended = try container.decode(Bool.self, forKey: .ended)
        mediaError = try container.decodeIfPresent(MediaError.self, forKey: .mediaError)
        seconds = try container.decode(Double.self, forKey: .seconds)
    }

    package var description: String {
        let format = { (ranges: [ClosedRange<Double>]) in
            ranges.map { String(format: "[%.3f, %.3f]", $0.lowerBound, $0.upperBound) }.joined(separator: " ")
        }
        return "\(error.map { "error \"\($0)\", " } ?? "")appended \(appended), frames \(totalVideoFrames) (dropped \(droppedVideoFrames), "
            + "corrupted \(corruptedVideoFrames)), buffered \(format(bufferedAfterAppends ?? []))"
            + (audioBufferedAfterAppends.map { ", audio \(format($0))" } ?? "") + ", at end \(format(bufferedAtEnd)), "
            + String(format: "time %.3f of %.3f, ", currentTime, duration ?? .nan) + "ended \(ended ? "yes" : "no"), "
            + String(format: "%.1f s in the page, %.1f s in all", seconds, wallSeconds)
    }
}
