import FFmpegKit
import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

/// CMAF packaging of a rung, checked with ffmpeg and ffprobe on the files: every segment decodes after the init
/// segment and starts with a key frame, the whole holds the source's frames at the source's times, audio
/// keeps its place and length, the sample entry is avc1, and a cut off an IDR is refused.
@Suite(.serialized) struct CMAFWriterTests {
    /// 4 s at 30 fps, 160x90, an IDR every second (x264's default B-frames), with AAC.
    static func clip() throws -> String {
        try Fixtures.media("cmaf-writer-clip.mp4", [
            "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
            "-t", "4", "-c:v", "libx264", "-g", "30", "-keyint_min", "30", "-sc_threshold", "0", "-c:a", "aac", "-shortest",
        ])
    }

    /// A 2 s cut on the source's clock.
    static func cuts(_ source: CMAFSource, every seconds: Int64 = 2) -> [Int64] {
        let tb = source.video.timeBase
        let first = source.packets.compactMap(\.pts).min()!
        return [first + seconds * Int64(tb.den) / Int64(tb.num)]
    }

    /// `init` followed by `parts`, as one file a player would read.
    static func joined(_ rendition: CMAFRendition, _ parts: [CMAFSegment], name: String) throws -> String {
        var data = try Data(contentsOf: URL(fileURLWithPath: rendition.path))
        for part in parts { data.append(try Data(contentsOf: URL(fileURLWithPath: rendition.path(of: part)))) }
        let path = Fixtures.output(name)
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// ffprobe's csv lines, each cut to the fields asked for (side data adds empty fields after them).
    static func lines(_ text: String, fields: Int = 1) -> [String] {
        text.split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).prefix(fields).joined(separator: ",") }
    }

    /// Presentation times in seconds of a stream's packets (`v` or `a`), sorted.
    static func times(_ path: String, _ stream: String) throws -> [Double] {
        lines(try Tool.ffprobe(["-select_streams", stream, "-show_entries", "packet=pts_time", "-of", "csv=p=0", path]))
            .compactMap { Double($0) }.sorted()
    }

    static func decodes(_ path: String) throws -> String {
        let result = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
        return result.status == 0 ? result.stderr : "exit \(result.status): \(result.stderr)"
    }

    @Test func separateAudioRenditionPlaysAndKeepsEveryFrame() throws {
        let source = try CMAFSource(path: try Self.clip())
        let audio = try #require(source.audio)
        let directory = Fixtures.output("cmaf-separate")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cuts = Self.cuts(source)
        let video = try source.writeVideo(cuts: cuts, to: directory + "/video")
        let sound = try CMAFWriter.writeAudio(audio, cuts: cuts, timeline: source.timeline, to: directory + "/audio")

        #expect(video.segments.count == 2 && sound.segments.count == 2)
        #expect(video.content == .video && sound.content == .audio)
        // Exact durations: 2 s each, in the track's ticks.
        #expect(video.segments.map(\.durationTicks) == [2 * Int64(video.timeBase.den), 2 * Int64(video.timeBase.den)])
        #expect(video.segments.map(\.durationSeconds) == [2, 2])
        #expect(video.segments[1].startTicks == video.segments[0].startTicks + video.segments[0].durationTicks)

        for (index, segment) in video.segments.enumerated() {
            let size = try FileManager.default.attributesOfItem(atPath: video.path(of: segment))[.size] as? Int
            #expect(size == segment.bytes)
            let one = try Self.joined(video, [segment], name: "one-\(index).mp4")
            #expect(try Self.decodes(one) == "", "init + \(segment.file) decodes")
            let first = Self.lines(try Tool.ffprobe(["-select_streams", "v", "-show_entries", "frame=key_frame,pict_type",
                                                     "-of", "csv=p=0", one]), fields: 2).first
            #expect(first == "1,I", "\(segment.file) starts with a key frame")
            // The I-frame byte range: a moof, through the end of the IDR's bytes (those of the source's IDR at the cut).
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: video.path(of: segment))))
            let range = try #require(segment.iFrame)
            #expect(String(decoding: bytes[range.offset + 4..<range.offset + 8], as: UTF8.self) == "moof")
            #expect(range.offset + range.length <= bytes.count)
            let idr = try #require(source.packets.first { $0.pts == (index == 0 ? source.packets[0].pts : cuts[0]) })
            #expect(Array(bytes[range.offset + range.length - idr.data.count..<range.offset + range.length]) == idr.data)
        }
        for (index, segment) in sound.segments.enumerated() {
            #expect(try Self.decodes(try Self.joined(sound, [segment], name: "audio-\(index).mp4")) == "")
        }

        // The whole: the source's frame count and pts (shifted by one origin), avc1, no extra streams.
        let whole = try Self.joined(video, video.segments, name: "video.mp4")
        let sourceTimes = try Self.times(source.path, "v"), outputTimes = try Self.times(whole, "v")
        #expect(outputTimes.count == 120 && sourceTimes.count == 120)
        let shift = outputTimes[0] - sourceTimes[0]
        #expect(zip(sourceTimes, outputTimes).allSatisfy { abs($1 - $0 - shift) < 1e-4 }, "same pts")
        #expect(Self.lines(try Tool.ffprobe(["-show_entries", "stream=codec_tag_string", "-of", "csv=p=0", whole])) == ["avc1"])
        #expect(Self.lines(try Tool.ffprobe(["-count_frames", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", whole])) == ["120"])

        // The audio: on the same timeline (its offset from the video as in the source) and as long as the video.
        let wholeAudio = try Self.joined(sound, sound.segments, name: "audio.mp4")
        let audioTimes = try Self.times(wholeAudio, "a"), sourceAudio = try Self.times(source.path, "a")
        #expect(abs((audioTimes[0] - outputTimes[0]) - (sourceAudio[0] - sourceTimes[0])) < 1e-4)
        let audioSeconds = sound.durationSeconds, videoSeconds = video.durationSeconds
        #expect(abs(videoSeconds - 4) < 1e-9)
        #expect(abs(audioSeconds - videoSeconds) < 0.05, "audio \(audioSeconds) s, video \(videoSeconds) s")
        #expect(abs(sound.segments[0].durationSeconds - 2) < 0.03, "audio cut within a frame of the video's")
    }

    @Test func audioMuxedPerRungKeepsBothTracks() throws {
        let source = try CMAFSource(path: try Self.clip())
        let directory = Fixtures.output("cmaf-muxed")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rung = try source.writeVideo(cuts: Self.cuts(source), to: directory, muxAudio: true)
        #expect(rung.content == .videoAndAudio)
        for (index, segment) in rung.segments.enumerated() {
            let one = try Self.joined(rung, [segment], name: "muxed-\(index).mp4")
            #expect(try Self.decodes(one) == "")
            #expect(Self.lines(try Tool.ffprobe(["-show_entries", "stream=codec_name", "-of", "csv=p=0", one])) == ["h264", "aac"])
        }
        let whole = try Self.joined(rung, rung.segments, name: "muxed.mp4")
        let video = try Self.times(whole, "v"), audio = try Self.times(whole, "a")
        #expect(video.count == 120)
        let sourceVideo = try Self.times(source.path, "v"), sourceAudio = try Self.times(source.path, "a")
        #expect(abs((audio[0] - video[0]) - (sourceAudio[0] - sourceVideo[0])) < 1e-4)
        #expect(audio.count == sourceAudio.count)
    }

    /// A cut must be the presentation time of an IDR: a P/B picture, a time between frames, and a time past the
    /// end are refused by code before anything is written past the first segment.
    @Test func cutsOffAnIDRAreRefused() throws {
        let source = try CMAFSource(path: try Self.clip())
        let idr = Self.cuts(source)[0]
        let frame = Int64(source.video.timeBase.den) / 30
        for (cut, code) in [(idr + frame, CMAFError.Code.cutNotOnIDR), (idr + frame / 2, .cutNotOnIDR), (idr * 10, .badCuts)] {
            let directory = Fixtures.output("cmaf-refused")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            do {
                _ = try source.writeVideo(cuts: [cut], to: directory)
                Issue.record("cut at \(cut) was accepted")
            } catch {
                #expect(error.code == code, "cut at \(cut): \(error)")
            }
        }
        let directory = Fixtures.output("cmaf-unordered")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: CMAFError.self) { try source.writeVideo(cuts: [idr, idr], to: directory) }
    }

    /// The ladder fixture: two rungs and the audio, cut at the same instants, every segment starting on a key frame.
    @Test func ladderFixtureIsAligned() throws {
        let directory = Fixtures.output("cmaf-ladder")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ladder = try CMAFFixtures.writeLadder(to: directory)
        #expect(ladder.rungs.count == 2)
        let starts = ladder.rungs.map { $0.segments.map { Double($0.startTicks) * $0.durationSeconds / Double($0.durationTicks) } }
        #expect(starts[0] == starts[1])
        #expect(ladder.rungs.allSatisfy { $0.segments.count == 2 })
        let audio = try #require(ladder.audio)
        #expect(audio.segments.count == 2)
        let rendition = try JSONDecoder().decode(CMAFRendition.self, from: JSONEncoder().encode(ladder.rungs[0]))
        #expect(rendition == ladder.rungs[0], "the result is Codable")
        for rung in ladder.rungs {
            let whole = try Self.joined(rung, rung.segments, name: "ladder.mp4")
            #expect(try Self.decodes(whole) == "")
            let keys = Self.lines(try Tool.ffprobe(["-select_streams", "v", "-show_entries", "frame=key_frame", "-of", "csv=p=0", whole]))
            #expect(keys.count == 120 && keys[0] == "1" && keys[60] == "1")
        }
    }
}
