import FFmpegKit
import Foundation
import TesseraCore
@testable import TesseraEngine

/// A rung read back from an H.264/AAC MP4 as the CMAF writer receives it from a job: the video as encoded
/// segments (one per GOP, in order) with the stream's headers, and the AAC packets as the job's audio track.
package struct CMAFSource {
    package var video: CMAFWriter.Video
    package var segments: [EncodedSegment]
    package var audio: AudioTrack?
    /// Every video packet in decode order, as read.
    package var packets: [MediaPacket]
    package var path: String

    /// The timeline shared by this rung and its audio.
    package var timeline: CMAFTimeline {
        let first = packets[0]
        return CMAFTimeline.common(videoFirstDTS: first.dts ?? first.pts!, videoTimeBase: video.timeBase, audio: audio)
    }

    /// Reads `path` with the engine's demuxer. The video is grouped into one encoded segment per IDR.
    package init(path: String) throws {
        self.path = path
        let input = try MediaInput(path: path)
        guard let stream = input.bestVideoStream else { throw ToolError("\(path): no video") }
        let audioStream = input.bestAudioStream
        var videoPackets: [MediaPacket] = []
        var audioPackets: [MediaPacket] = []
        let packet = Packet()
        while try input.read(into: packet) {
            if packet.streamIndex == stream.index {
                videoPackets.append(packet.mediaPacket)
            } else if packet.streamIndex == audioStream?.index {
                audioPackets.append(packet.mediaPacket)
            }
        }
        let classifier = RandomAccessClassifier(codecName: "h264", intraOnly: false, extradata: stream.parameters.extradata)
        var groups: [[MediaPacket]] = []
        for media in videoPackets {
            let idr = media.data.withUnsafeBytes { classifier.classify($0, keyFlag: media.isKey) } == .idr
            if idr || groups.isEmpty { groups.append([]) }
            groups[groups.count - 1].append(media)
        }
        segments = groups.enumerated().map { index, group in
            EncodedSegment(jobID: "cmaf-fixture", index: index, timeBase: stream.timeBase, extradata: stream.parameters.extradata,
                           frameCount: group.count, decodedFrames: group.count, encodeSeconds: 0, packets: group)
        }
        video = CMAFWriter.Video(parameters: stream.parameters, timeBase: stream.timeBase, frameRate: stream.averageFrameRate)
        packets = videoPackets
        audio = audioStream.map { a in
            let start = audioPackets.first?.pts ?? 0
            let frame = a.parameters.frameSize > 0 ? Int64(a.parameters.frameSize) : 1024
            return AudioTrack(parameters: a.parameters, timeBase: a.timeBase, packets: audioPackets,
                              startSeconds: a.timeBase.seconds(a.startTime ?? start), startTicks: a.startTime ?? start,
                              sourceDurationSeconds: a.duration.map { a.timeBase.seconds($0) } ?? 0,
                              frameSeconds: Double(frame) / Double(max(1, a.sampleRate)), copied: true)
        }
    }

    /// Writes this rung's video (with the audio muxed in when `muxAudio`) into `directory`, cut at `cuts`.
    package func writeVideo(cuts: [Int64], to directory: String, muxAudio: Bool = false,
                            timeline: CMAFTimeline? = nil) throws(CMAFError) -> CMAFRendition {
        let segments = self.segments
        return try CMAFWriter.writeVideo(video, segmentCount: segments.count, loadSegment: { segments[$0] }, cuts: cuts,
                                         timeline: timeline ?? self.timeline, muxedAudio: muxAudio ? audio : nil, to: directory)
    }
}

/// A small CMAF set for playback and packaging tests, made with the engine's `CMAFWriter`.
package enum CMAFFixtures {
    /// A written ladder: one video rendition per rung (highest first) and the audio rendition, all cut at the
    /// same times and on one timeline, under `directory` (`rung_<height>/`, `audio/`, each with `init.mp4` and
    /// `segment_00001.m4s`, …).
    package struct Ladder: Sendable {
        package var directory: String
        package var rungs: [CMAFRendition]
        package var audio: CMAFRendition?
        /// The cut times, in seconds from the source's first frame.
        package var cutSeconds: [Double]
        /// Each rung's encoded clip and its video stream as the writer took it (same order as `rungs`).
        package var clips: [String] = []
        package var videos: [CMAFWriter.Video] = []
        /// The AAC track the audio rendition was written from.
        package var audioTrack: AudioTrack?
    }

    /// Encodes a `seconds`-long testsrc2 clip with a 440 Hz tone at 30 fps for each height in `heights`
    /// (16:9, libx264 with an IDR every `keyframeSeconds`, no scene cuts, AAC), and writes it as CMAF with a
    /// media segment every `segmentSeconds` into `directory` (created; removing it is the caller's).
    /// `segmentSeconds` must be a multiple of `keyframeSeconds`.
    package static func writeLadder(to directory: String, heights: [Int] = [180, 90], seconds: Int = 4,
                                    keyframeSeconds: Int = 1, segmentSeconds: Int = 2, audio: Bool = true) throws -> Ladder {
        let rate = 30
        var rungs: [CMAFRendition] = []
        var audioRendition: CMAFRendition?
        var cuts: [Int64] = []
        var timeline: CMAFTimeline?
        var clips: [String] = [], videos: [CMAFWriter.Video] = []
        var audioTrack: AudioTrack?
        for height in heights {
            let width = (height * 16 / 9 + 1) / 2 * 2
            let inputs = ["-f", "lavfi", "-i", "testsrc2=size=\(width)x\(height):rate=\(rate)"]
                + (audio ? ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"] : [])
            let clip = try Fixtures.media("cmaf-\(width)x\(height)-\(seconds)s-\(keyframeSeconds)k\(audio ? "-a" : "").mp4", inputs + [
                "-t", "\(seconds)", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                "-g", "\(rate * keyframeSeconds)", "-keyint_min", "\(rate * keyframeSeconds)", "-sc_threshold", "0",
            ] + (audio ? ["-c:a", "aac", "-shortest"] : []))
            let source = try CMAFSource(path: clip)
            clips.append(clip)
            videos.append(source.video)
            let tb = source.video.timeBase
            let firstPTS = source.packets.compactMap(\.pts).min()!
            if timeline == nil {
                timeline = source.timeline
                cuts = stride(from: segmentSeconds, to: seconds, by: segmentSeconds).map { firstPTS + Int64($0) * Int64(tb.den) / Int64(tb.num) }
            }
            rungs.append(try source.writeVideo(cuts: cuts, to: directory + "/rung_\(height)", timeline: timeline))
            if audioRendition == nil, let track = source.audio {
                audioRendition = try CMAFWriter.writeAudio(track, cuts: cuts, timeline: timeline!, to: directory + "/audio")
                audioTrack = track
            }
        }
        return Ladder(directory: directory, rungs: rungs, audio: audioRendition,
                      cutSeconds: stride(from: segmentSeconds, to: seconds, by: segmentSeconds).map(Double.init),
                      clips: clips, videos: videos, audioTrack: audioTrack)
    }
}
