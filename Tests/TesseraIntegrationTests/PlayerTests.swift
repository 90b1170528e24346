import Foundation
import Testing
import TesseraCore
import TesseraTestSupport

/// A real player: CMAF renditions served on loopback and played by headless Chromium through Media Source Extensions,
/// each rung to the end and switching rung at every segment boundary. The fixtures are ffmpeg's own HLS/fMP4 ladders;
/// the negative control (keyframes at other instants in one rung) proves that switching can fail.
@Suite(.serialized) struct PlayerTests {
    static let rate = 30
    static let seconds = 4

    /// A folder with one HLS fMP4 rung per (size, GOP): `WxH/index.m3u8`, `WxH/init.mp4`, `WxH/segN.m4s`.
    static func ladder(_ name: String, _ rungs: [(size: String, gop: Int)]) throws -> (folder: URL, rungs: [MSEPlayer.Rung]) {
        let folder = Fixtures.directory.appendingPathComponent("player-\(name)")
        try? FileManager.default.removeItem(at: folder)
        for rung in rungs {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent(rung.size), withIntermediateDirectories: true)
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=\(rung.size):rate=\(rate):duration=\(seconds)",
                             "-c:v", "libx264", "-preset", "veryfast", "-g", "\(rung.gop)", "-keyint_min", "\(rung.gop)", "-sc_threshold", "0",
                             "-f", "hls", "-hls_segment_type", "fmp4", "-hls_time", "1", "-hls_playlist_type", "vod",
                             "-hls_fmp4_init_filename", "init.mp4",
                             "-hls_segment_filename", folder.appendingPathComponent("\(rung.size)/seg%d.m4s").path,
                             folder.appendingPathComponent("\(rung.size)/index.m3u8").path])
        }
        return (folder, try rungs.map { try MSEPlayer.Rung.hls("\($0.size)/index.m3u8", in: folder) })
    }

    static let aligned = Result { try ladder("aligned", [("320x180", rate), ("640x360", rate)]) }
    /// The second rung's keyframes every 1.2 s instead of 1 s: as many segments, at other instants.
    static let misaligned = Result { try ladder("misaligned", [("320x180", rate), ("640x360", rate * 6 / 5)]) }

    /// A 320x180 video rung and an AAC rendition group (`video/`, `audio/`, `master.m3u8`), as ffmpeg's hls muxer lays them.
    static let withAudio = Result { () throws -> (folder: URL, video: MSEPlayer.Rung, audio: MSEPlayer.Rung) in
        let folder = Fixtures.directory.appendingPathComponent("player-audio")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=\(rate):duration=\(seconds)",
                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)", "-map", "0:v", "-map", "1:a",
                         "-c:v", "libx264", "-preset", "veryfast", "-g", "\(rate)", "-keyint_min", "\(rate)", "-sc_threshold", "0",
                         "-c:a", "aac", "-b:a", "64k", "-f", "hls", "-hls_segment_type", "fmp4", "-hls_time", "1", "-hls_playlist_type", "vod",
                         "-hls_fmp4_init_filename", "init.mp4", "-var_stream_map", "v:0,agroup:aud,name:video a:0,agroup:aud,name:audio",
                         "-master_pl_name", "master.m3u8", "-hls_segment_filename", folder.appendingPathComponent("%v/seg%d.m4s").path,
                         folder.appendingPathComponent("%v/index.m3u8").path])
        return (folder, try .hls("video/index.m3u8", in: folder), try .hls("audio/index.m3u8", in: folder))
    }

    /// The rung's media playlist (the fixtures keep it beside the init segment).
    static func playlist(_ folder: URL, _ rung: MSEPlayer.Rung) -> String {
        folder.appendingPathComponent((rung.initSegment as NSString).deletingLastPathComponent + "/index.m3u8").path
    }

    /// Frames in a rung, counted by ffprobe decoding its playlist (the stream is listed once more under its program).
    static func frames(_ folder: URL, _ rung: MSEPlayer.Rung) throws -> Int {
        let text = try Tool.ffprobe(["-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0",
                                     playlist(folder, rung)])
        guard let count = text.split(whereSeparator: \.isNewline).first.flatMap({ Int($0) }) else { throw ToolError("ffprobe frames: \(text)") }
        return count
    }

    /// The presentation times of a rung's keyframes, by ffprobe.
    static func keyframeTimes(_ folder: URL, _ rung: MSEPlayer.Rung) throws -> [String] {
        let text = try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "packet=pts_time,flags", "-of", "csv=p=0", playlist(folder, rung)])
        return text.split(whereSeparator: \.isNewline).filter { $0.hasSuffix(",K_") }.map { String($0.prefix { $0 != "," }) }
    }

    @Test func codecsComeFromTheInitSegment() throws {
        let (folder, rungs) = try Self.aligned.get()
        for rung in rungs {
            let level = try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "stream=profile,level", "-of", "csv=p=0",
                                          Self.playlist(folder, rung)])
                .split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
            #expect(level.hasPrefix("High,"), "libx264's default profile, \(level)")
            let levelIDC = try #require(Int(level.split(separator: ",").last ?? ""))
            #expect(rung.mimeType == "video/mp4; codecs=\"avc1.6400\(String(format: "%02X", levelIDC))\"")
        }
    }

    @Test(.chromium) func eachRungPlaysEveryFrameToTheEnd() throws {
        let (folder, rungs) = try Self.aligned.get()
        for rung in rungs {
            let expected = try Self.frames(folder, rung)
            #expect(expected == Self.rate * Self.seconds)
            let report = try MSEPlayer.play(folder: folder, rung: rung)
            #expect(report.supported[rung.mimeType] == true, "\(rung.mimeType) in MSE")
            #expect(report.error == nil, "\(rung.name): \(report)")
            #expect(report.appended == rung.segments.count + 1)
            #expect(report.totalVideoFrames == expected, "\(rung.name): every frame decoded: \(report)")
            #expect(report.corruptedVideoFrames == 0)
            #expect(report.ended)
            let buffered = try #require(report.bufferedAfterAppends)
            #expect(buffered.count == 1, "one range: \(report)")
            let range = try #require(buffered.first)
            let frame = 1 / Double(Self.rate)
            #expect(abs(range.upperBound - range.lowerBound - Double(expected) * frame) < frame / 2, "the range spans every frame: \(report)")
            #expect(abs(report.currentTime - range.upperBound) < frame, "played to the end: \(report)")
        }
    }

    @Test(.chromium) func switchingAtEverySegmentKeepsOneRange() throws {
        let (folder, rungs) = try Self.aligned.get()
        #expect(try Self.keyframeTimes(folder, rungs[0]) == Self.keyframeTimes(folder, rungs[1]), "the fixture's keyframes are aligned")
        let expected = try Self.frames(folder, rungs[0])
        let single = try MSEPlayer.play(folder: folder, rung: rungs[0])
        let report = try MSEPlayer.playSwitching(folder: folder, rungs: rungs)
        #expect(report.error == nil, "\(report)")
        #expect(report.appended == 2 * rungs[0].segments.count, "an init before every segment")
        let buffered = try #require(report.bufferedAfterAppends)
        #expect(buffered.count == 1, "one gap-free range: \(report)")
        let whole = try #require(single.bufferedAfterAppends?.first)
        let range = try #require(buffered.first)
        #expect(abs(range.lowerBound - whole.lowerBound) < 0.001 && abs(range.upperBound - whole.upperBound) < 0.001,
                "the range of one whole rung: \(range) against \(whole)")
        #expect(report.totalVideoFrames == expected, "every frame decoded: \(report)")
        #expect(report.corruptedVideoFrames == 0)
        #expect(report.ended)
    }

    /// The negative control: a rung whose keyframes fall elsewhere leaves gaps where it is switched to, and playback
    /// stalls at the first one.
    @Test(.chromium) func misalignedKeyframesBreakSwitching() throws {
        let (folder, rungs) = try Self.misaligned.get()
        #expect(try Self.keyframeTimes(folder, rungs[0]) != Self.keyframeTimes(folder, rungs[1]), "the fixture's keyframes differ")
        #expect(rungs[0].segments.count == rungs[1].segments.count, "as many segments, so only their instants differ")
        let expected = try Self.frames(folder, rungs[0])
        let report = try MSEPlayer.playSwitching(folder: folder, rungs: rungs)
        #expect(report.error?.contains("stalled at") == true && report.error?.hasSuffix("before a gap") == true, "\(report)")
        #expect((report.bufferedAfterAppends?.count ?? 0) > 1, "gaps in the buffered ranges: \(report)")
        #expect(!report.ended)
        #expect(report.totalVideoFrames < expected)
    }

    @Test(.chromium) func aRungWithItsAudioGroupPlaysToTheEnd() throws {
        let (folder, video, audio) = try Self.withAudio.get()
        // The codecs read from the init segments are those ffmpeg's muxer wrote into the master playlist.
        let codecs = { (rung: MSEPlayer.Rung) in rung.mimeType.components(separatedBy: "codecs=\"").last?.dropLast() ?? "" }
        let master = try String(contentsOf: folder.appendingPathComponent("master.m3u8"), encoding: .utf8)
        #expect(master.lowercased().contains("codecs=\"\(codecs(video)),\(codecs(audio))\"".lowercased()), "\(video.mimeType), \(audio.mimeType)")
        #expect(audio.mimeType == "audio/mp4; codecs=\"mp4a.40.2\"")

        let expected = try Self.frames(folder, video)
        let report = try MSEPlayer.play(folder: folder, rung: video, audio: audio)
        #expect(report.error == nil, "\(report)")
        #expect(report.appended == video.segments.count + audio.segments.count + 2)
        #expect(report.audioBufferedAfterAppends?.count == 1, "gap-free audio: \(report)")
        #expect(report.bufferedAfterAppends?.count == 1, "\(report)")
        #expect(report.totalVideoFrames == expected, "every frame decoded: \(report)")
        #expect(report.ended)
    }

    /// A second negative control: a rung whose second segment lost its second half is refused at the append after it.
    @Test(.chromium) func aTruncatedSegmentIsRefused() throws {
        let (source, rungs) = try Self.aligned.get()
        let folder = Fixtures.directory.appendingPathComponent("player-truncated")
        try? FileManager.default.removeItem(at: folder)
        let rung = rungs[0]
        for path in [rung.initSegment] + rung.segments {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent((path as NSString).deletingLastPathComponent),
                                                    withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: source.appendingPathComponent(path), to: folder.appendingPathComponent(path))
        }
        let damaged = folder.appendingPathComponent(rung.segments[1])
        let bytes = try Data(contentsOf: damaged)
        try bytes.prefix(bytes.count / 2).write(to: damaged)

        let report = try MSEPlayer.play(folder: folder, rung: rung)
        // The parser waits for the rest of the cut box, so the refusal comes with the next segment's bytes.
        let refused = [rung.segments[1], rung.segments[2]].map { "append of /\($0) failed" }
        #expect(refused.contains { report.error?.hasPrefix("Error: \($0)") == true }, "\(report)")
        #expect(!report.ended)
        #expect(report.totalVideoFrames < Self.rate * Self.seconds)
    }

    @Test func switchingNeedsRungsOfEqualSegmentCount() throws {
        let (folder, rungs) = try Self.aligned.get()
        var short = rungs[1]
        short.segments.removeLast()
        #expect { try MSEPlayer.playSwitching(folder: folder, rungs: [rungs[0], short]) } throws: {
            ($0 as? PlayerError)?.code == .plan
        }
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs where Chromium is installed, and always in CI (where a missing Chromium fails the test instead).
    static var chromium: Self { .enabled(if: MSEPlayer.shouldRun, "chromium is not installed: skipped (CI installs it and runs these)") }
}
