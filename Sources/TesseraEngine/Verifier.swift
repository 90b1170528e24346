import FFmpegKit
import Foundation
import TesseraCore

/// Reopens a finished output and checks it before the job may report success.
public enum Verifier {
    public struct Expectation: Sendable {
        public var frameCount: Int
        public var videoDurationSeconds: Double
        /// Seconds per video frame, the tolerance of the video duration.
        public var frameSeconds: Double
        public var width: Int
        public var height: Int
        /// Whether the video carries a display matrix (only when the pixels keep a rotated orientation).
        public var rotated: Bool
        public var audio: AudioExpectation?
        public var codec: VideoCodec = .h264
        /// Each segment's first frame, counted in display order: each must be a picture a decoder can start from.
        public var segmentStarts: [Int] = []
    }

    public struct AudioExpectation: Sendable {
        public var sourceDurationSeconds: Double
        /// Audio start minus video start in the source (0 when they start together).
        public var offsetSeconds: Double
        public var frameSeconds: Double
    }

    public struct Report: Sendable, Codable {
        public var frames: Int
        public var videoDurationSeconds: Double
        public var audioDurationSeconds: Double?
        public var audioOffsetSeconds: Double?
        public var topLevelBoxes: [String]
    }

    public static func expectation(for plan: JobPlan, audio: AudioTrack?) -> Expectation {
        let frames = plan.outputFrameCount
        let videoStart = plan.output.timeBase.seconds(plan.outputSpan.lowerBound)
        var expectation = Expectation(
            frameCount: frames,
            videoDurationSeconds: plan.outputDurationSeconds,
            frameSeconds: plan.outputDurationSeconds / Double(max(1, frames)),
            width: Int(plan.output.width), height: Int(plan.output.height),
            rotated: plan.output.displayMatrix != nil,
            audio: audio.map {
                AudioExpectation(sourceDurationSeconds: $0.sourceDurationSeconds,
                                 offsetSeconds: $0.startSeconds - videoStart,
                                 frameSeconds: $0.frameSeconds)
            })
        expectation.codec = plan.settings.videoCodec
        expectation.segmentStarts = plan.cuts.segments.indices.reduce(into: [0]) { $0.append($0.last! + plan.outputFrames($1)) }.dropLast().map { $0 }
        return expectation
    }

    public static func verify(_ path: String, _ expected: Expectation) throws(TesseraError) -> Report {
        try verify(path, boxes: topLevelBoxes(path), expected) { () throws(FFmpegError) in try MediaInput(path: path) }
    }

    /// Checks an output given its top-level boxes and a way to open it (bytes that may still be arriving).
    public static func verify(_ path: String, boxes: [String], _ expected: Expectation,
                              open: () throws(FFmpegError) -> MediaInput) throws(TesseraError) -> Report {
        func fail(_ problem: String) -> TesseraError { TesseraError(.verification, path, problem) }
        guard MP4Layout.isFaststart(boxes) else { throw fail("moov is not before mdat (boxes: \(boxes.joined(separator: " ")))") }
        let input: MediaInput
        do { input = try open() } catch { throw fail("cannot reopen the output (\(error.message))") }
        guard let video = input.bestVideoStream, video.codecName == expected.codec.rawValue else {
            throw fail("no \(expected.codec.displayName) video stream")
        }
        guard video.width == expected.width, video.height == expected.height else {
            throw fail("video is \(video.width)x\(video.height), the plan has \(expected.width)x\(expected.height)")
        }
        guard (video.rotation.map { $0 != 0 } ?? false) == expected.rotated else {
            throw fail(expected.rotated ? "lost the source's rotation" : "carries rotation metadata the plan did not write")
        }
        let audio = input.bestAudioStream
        if expected.audio != nil, audio?.codecName != "aac" { throw fail("no AAC audio stream") }
        if expected.audio == nil, audio != nil { throw fail("has an audio stream the plan did not make") }

        var frames = 0
        // Each video picture's pts and whether a decoder can start from it.
        var shown: [(pts: Int64, decoderStart: Bool)] = []
        var minPTS = Int64.max, maxEnd = Int64.min
        var audioMin = Int64.max, audioEnd = Int64.min
        let packet = Packet()
        do {
            while try input.read(into: packet) {
                if packet.streamIndex == video.index {
                    frames += 1
                    if let pts = packet.pts {
                        let start = packet.withData { SegmentStart.isDecoderStart($0, codec: expected.codec, extradata: video.parameters.extradata) }
                        shown.append((pts, start))
                        minPTS = min(minPTS, pts)
                        maxEnd = max(maxEnd, pts + packet.duration)
                    }
                } else if let audio, packet.streamIndex == audio.index, let pts = packet.pts {
                    audioMin = min(audioMin, pts)
                    audioEnd = max(audioEnd, pts + packet.duration)
                }
            }
        } catch {
            throw fail("read error (\(error.message))")
        }
        guard frames == expected.frameCount else { throw fail("has \(frames) video frames, the plan has \(expected.frameCount)") }
        // The pictures in display order, for both checks below.
        let order = shown.sorted { $0.pts < $1.pts }
        try checkSegmentStarts(order, expected, path)
        // The stream's duration (its sample table's sum), or the pictures' span where that sum ends before the last
        // picture shown, whichever is nearer (see `picturesSpan`); packets may not carry durations.
        let measured = [video.duration, picturesSpan(order.map(\.pts))].compactMap { $0.map { video.timeBase.seconds($0) } }
        let videoDuration = measured.min { abs($0 - expected.videoDurationSeconds) < abs($1 - expected.videoDurationSeconds) }
            ?? video.timeBase.seconds(maxEnd - minPTS)
        guard abs(videoDuration - expected.videoDurationSeconds) <= max(0.002, expected.frameSeconds * 0.5) else {
            throw fail("video lasts \(videoDuration.rounded3) s, the source \(expected.videoDurationSeconds.rounded3) s")
        }
        var report = Report(frames: frames, videoDurationSeconds: videoDuration, topLevelBoxes: boxes)
        if let wanted = expected.audio, let audio {
            let tb = audio.timeBase
            // The stream's start accounts for the AAC priming that the edit list hides.
            let start = audio.startTime.map { tb.seconds($0) } ?? tb.seconds(audioMin)
            let videoStart = video.startTime.map { video.timeBase.seconds($0) } ?? video.timeBase.seconds(minPTS)
            let offset = start - videoStart
            guard abs(offset - wanted.offsetSeconds) <= wanted.frameSeconds + 0.001 else {
                throw fail("audio starts \(offset.rounded3) s from video, the source \(wanted.offsetSeconds.rounded3) s")
            }
            let duration = audio.duration.map { tb.seconds($0) } ?? tb.seconds(audioEnd - audioMin)
            guard abs(duration - wanted.sourceDurationSeconds) <= 0.05 else {
                throw fail("audio lasts \(duration.rounded3) s, the source \(wanted.sourceDurationSeconds.rounded3) s")
            }
            report.audioDurationSeconds = duration
            report.audioOffsetSeconds = offset
        }
        return report
    }

    /// Every segment starts on a picture a decoder can start from: an IDR, or an AV1 key frame with its sequence header.
    /// `order`: the pictures in display order.
    static func checkSegmentStarts(_ order: [(pts: Int64, decoderStart: Bool)], _ expected: Expectation, _ path: String) throws(TesseraError) {
        for (k, frame) in expected.segmentStarts.enumerated() where frame < order.count && !order[frame].decoderStart {
            let what = expected.codec == .av1 ? "a key frame with a sequence header" : "an IDR"
            throw TesseraError(.verification, path, "segment \(k) starts on frame \(frame), which is not \(what)")
        }
    }

    /// From the first picture's start to the last one's end, taking the usual step between pictures for the last
    /// one's duration. A copy trimmed at a keyframe keeps the P-frame after it and drops the B-frames shown before
    /// it: the last picture then lies past the decode span and the sample table's sum stops short of it, though the
    /// edit list shows it.
    /// `sorted`: the pictures' pts in display order.
    static func picturesSpan(_ sorted: [Int64]) -> Int64? {
        guard let step = PictureSteps.usual(sorted) else { return nil }
        return sorted[sorted.count - 1] - sorted[0] + step
    }

    static func topLevelBoxes(_ path: String) -> [String] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()).map { Int64($0) } ?? 0
        return MP4Layout.topLevelBoxes(fileSize: size) { offset, count in
            guard (try? handle.seek(toOffset: UInt64(offset))) != nil else { return [] }
            return (try? handle.read(upToCount: count)).map { [UInt8]($0) } ?? []
        }
    }
}

extension Double {
    var rounded3: Double { (self * 1000).rounded() / 1000 }
}
