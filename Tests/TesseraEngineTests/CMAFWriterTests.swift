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
        // tfdt: the first decode time on the common timeline (the video's, as it decodes first), then 2 s on.
        #expect(video.segments.map(\.decodeTicks) == [0, 2 * Int64(video.timeBase.den)])

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
            let (offset, end) = (Int(range.offset), Int(range.offset + range.length))
            #expect(String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self) == "moof")
            #expect(end <= bytes.count)
            let idr = try #require(source.packets.first { $0.pts == (index == 0 ? source.packets[0].pts : cuts[0]) })
            #expect(Array(bytes[end - idr.data.count..<end]) == idr.data)
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
        // Sync samples exactly at the IDRs, one a second.
        let flags = Self.lines(try Tool.ffprobe(["-select_streams", "v", "-show_entries", "packet=pts,flags", "-of", "csv=p=0", whole]), fields: 2)
        let synced = flags.filter { $0.hasSuffix(",K_") }.compactMap { Int64($0.split(separator: ",")[0]) }
        #expect(synced == [0, 1, 2, 3].map { video.segments[0].startTicks + $0 * Int64(video.timeBase.den) })

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

    /// The engine's own encoded segments (libx264's Annex B headers, each segment's B-frame delay) packaged at
    /// every other join, with the job's audio muxed in: the same frames at the same times as the stitched MP4.
    @Test func engineSegmentsPackageLikeTheStitchedFile() throws {
        let plan = try JobPlanner.plan(try MediaProbe.probe(try SourceKind.closedGOPWithBFrames.make()), options: quickOptions())
        var tasks: [SegmentTask] = []
        try SegmentSource(plan: plan).forEachTask { tasks.append($0) }
        let encoded = try tasks.sorted { $0.header.segment.index < $1.header.segment.index }.map { try SegmentEncoder.encode($0) }
        let audio = try #require(try AudioTranscoder.run(plan))
        #expect(encoded.count >= 4)
        let cuts = stride(from: 2, to: encoded.count, by: 2).map { encoded[$0].packets.compactMap(\.pts).min()! }
        let first = encoded[0].packets[0]
        let timeline = CMAFTimeline.common(videoFirstDTS: first.dts ?? first.pts!, videoTimeBase: plan.output.timeBase, audio: audio)

        let directory = Fixtures.output("cmaf-engine")
        let stitched = Fixtures.output("cmaf-engine.mp4")
        defer {
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: stitched)
        }
        let rung = try CMAFWriter.writeVideo(.init(plan: plan, extradata: encoded[0].header.extradata), segmentCount: encoded.count,
                                             loadSegment: { encoded[$0] }, cuts: cuts, timeline: timeline, muxedAudio: audio, to: directory)
        _ = try Stitcher.stitch(plan: plan, loadSegment: { encoded[$0] }, audio: audio, to: stitched)
        #expect(rung.segments.count == cuts.count + 1)
        #expect(abs(rung.durationSeconds - plan.outputDurationSeconds) < 1e-9)

        let whole = try Self.joined(rung, rung.segments, name: "engine.mp4")
        #expect(try Self.decodes(whole) == "")
        #expect(Self.lines(try Tool.ffprobe(["-select_streams", "v", "-show_entries", "stream=codec_tag_string", "-of", "csv=p=0", whole])) == ["avc1"])
        let cmafTimes = try Self.times(whole, "v"), stitchedTimes = try Self.times(stitched, "v")
        #expect(cmafTimes.count == plan.outputFrameCount && stitchedTimes.count == plan.outputFrameCount)
        let shift = cmafTimes[0] - stitchedTimes[0]
        #expect(zip(stitchedTimes, cmafTimes).allSatisfy { abs($1 - $0 - shift) < 1e-4 }, "same pts as the stitched MP4")
        for (index, segment) in rung.segments.enumerated() {
            let one = try Self.joined(rung, [segment], name: "engine-\(index).mp4")
            #expect(Self.lines(try Tool.ffprobe(["-select_streams", "v", "-show_entries", "frame=key_frame,pict_type",
                                                 "-of", "csv=p=0", one]), fields: 2).first == "1,I", "\(segment.file) starts with a key frame")
        }
        let audioTimes = try Self.times(whole, "a")
        let audioEnd = audioTimes.last! + audio.frameSeconds
        #expect(abs((audioEnd - audioTimes[0]) - (cmafTimes.last! + plan.outputDurationSeconds / Double(plan.outputFrameCount) - cmafTimes[0])) < 0.05,
                "audio and video last as long")
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

    /// An open GOP's later I pictures carry the key flag but are no IDR (their leading pictures need the GOP
    /// before): a cut there is refused.
    @Test func aKeyFrameThatIsNoIDRIsRefused() throws {
        let source = try CMAFSource(path: try SourceKind.openGOP.make())
        let key = try #require(source.packets.dropFirst().first { $0.isKey })
        let directory = Fixtures.output("cmaf-open-gop")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            _ = try source.writeVideo(cuts: [key.pts!], to: directory)
            Issue.record("a cut on an open GOP's I picture was accepted")
        } catch {
            #expect(error.code == .cutNotOnIDR, "\(error)")
        }
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
