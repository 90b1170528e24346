import Foundation
import Testing
import TesseraTestSupport

/// `tessera transcode --ladder` end to end: a small source with motion and audio made into three rungs, packaged as
/// HLS and DASH over one set of CMAF segments (and as one MP4 per rung), then read back by ffprobe and ffmpeg.
@Suite(.serialized) struct LadderTests {
    static let heights = [360, 240, 144]
    static let sizes = ["640x360", "426x240", "256x144"]
    static let ladder = heights.map(String.init).joined(separator: ",")
    static let seconds = 4, rate = 25
    /// One second per media segment: four of them.
    static let segmentSeconds = 1

    /// 4 s of 640x360 at 25 fps with a tone; keyframes every 1.6 s, so the rungs' keyframes at every second are
    /// the transcode's own, not the source's.
    static func source() throws -> String {
        try Fixtures.media("ladder-640x360.mp4", ["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=\(rate):duration=\(seconds)",
                                                  "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)",
                                                  "-c:v", "libx264", "-preset", "ultrafast", "-g", "40", "-keyint_min", "40",
                                                  "-c:a", "aac", "-shortest"])
    }

    /// `tessera ARGS` with the sandbox's job store, stopped after; the sandbox's files stay.
    static func tessera(_ sandbox: Sandbox, _ arguments: [String]) throws -> Tool.Output {
        defer { _ = try? Tool.run(sandbox.binary, ["db", "stop", "--force", "--data-dir", sandbox.dataDir]) }
        return try sandbox.tessera(arguments)
    }

    /// The ladder transcoded to `-o FOLDER/master.m3u8` with `extra` options, in a sandbox of its own.
    static func transcode(_ name: String, _ extra: [String] = [], preset: String = "veryfast") throws -> LadderFolder {
        let sandbox = try Sandbox(name)
        let folder = sandbox.directory.appendingPathComponent("out")
        let made = try tessera(sandbox, ["transcode", try source(), "-o", folder.appendingPathComponent("master.m3u8").path,
                                         "--ladder", ladder, "--hls-time", "\(segmentSeconds)", "--preset", preset] + extra)
        guard made.status == 0 else { throw ToolError("transcode --ladder \(extra): \(made.stderr)") }
        return try LadderFolder(folder: folder)
    }

    /// The ladder transcoded once to HLS, shared by the tests that read it.
    static let hls = Result { try transcode("ladder-hls") }

    @Test func theFolderHasARungFolderEachAndTheAudio() throws {
        let output = try Self.hls.get()
        let names = try FileManager.default.contentsOfDirectory(atPath: output.folder.path)
        #expect(Set(names).isSuperset(of: ["master.m3u8", "audio"] + Self.heights.map { "\($0)p" }), "\(names.sorted())")
        #expect(output.variants.map { ($0.uri as NSString).deletingLastPathComponent } == Self.heights.map { "\($0)p" },
                "one variant per rung, in the ladder's order")
        for rung in try output.variants.map(output.rung) + [try #require(try output.audio())] {
            #expect((rung.initSegment as NSString).lastPathComponent == "init.mp4", "\(rung.initSegment)")
            #expect(rung.segments.count == Self.seconds / Self.segmentSeconds, "\(rung.name): \(rung.segments)")
            for segment in rung.segments {
                let file = (segment as NSString).lastPathComponent
                #expect(file.wholeMatch(of: /segment_[0-9]{5}\.m4s/) != nil, "\(segment)")
                #expect(FileManager.default.fileExists(atPath: output.path(segment)), "\(segment)")
            }
        }
        let beside = try FileManager.default.contentsOfDirectory(atPath: output.folder.deletingLastPathComponent().path)
        #expect(!beside.contains { $0.contains("tmp") }, "nothing left beside the output: \(beside)")
    }

    /// Every rung holds every source frame in its place, read through its media playlist.
    @Test func everyRungIsFrameExact() throws {
        let output = try Self.hls.get()
        let source = try Self.source()
        let sourceFrames = try Probe.frames(source)
        #expect(sourceFrames == Self.seconds * Self.rate)
        for (variant, size) in zip(output.variants, Self.sizes) {
            let playlist = output.path(variant.uri)
            #expect(try Probe.frames(playlist) == sourceFrames, "\(variant.uri)")
            let probed = try Probe.size(playlist)
            #expect("\(probed.width)x\(probed.height)" == size, "\(variant.uri)")
            let check = try Probe.frameExactness(source: source, output: playlist)
            #expect(check.problems.isEmpty, "\(variant.uri): \(check.problems.prefix(5))")
            #expect(check.meanPSNR > 25, "\(variant.uri): mean PSNR \(check.meanPSNR) dB against the source at its size")
        }
    }

    /// Keyframes at the same instants in every rung, and every media segment of every rung starts with an IDR at the
    /// same time as the others'.
    @Test func keyframesAreAlignedAndStartEverySegment() throws {
        let output = try Self.hls.get()
        let rungs = try output.variants.map(output.rung)
        let keyframes = try output.variants.map { try Probe.keyframeTimes(output.path($0.uri)) }
        #expect(keyframes[0].count >= Self.seconds / Self.segmentSeconds, "\(keyframes[0])")
        for (variant, times) in zip(output.variants, keyframes).dropFirst() {
            #expect(times == keyframes[0], "\(variant.uri): keyframes at \(times), the first rung's at \(keyframes[0])")
        }
        var starts: [[Double]] = []
        for rung in rungs {
            var rungStarts: [Double] = []
            for index in rung.segments.indices {
                let joined = try Probe.joined(output.folder, rung, segment: index)
                defer { try? FileManager.default.removeItem(at: joined) }
                let first = try #require(try Probe.frameTypes(joined.path).first, "\(rung.segments[index]): no frames")
                #expect(first.key && first.type == "I", "\(rung.segments[index]) starts with \(first)")
                rungStarts.append(try Probe.start(joined.path, stream: "v:0"))
            }
            starts.append(rungStarts)
        }
        for (rung, rungStarts) in zip(rungs, starts).dropFirst() {
            #expect(zip(rungStarts, starts[0]).allSatisfy { abs($0 - $1) < 0.0005 }, "\(rung.name): segments start at \(rungStarts), not \(starts[0])")
        }
        // Each segment start is one of the rung's keyframes (ffprobe prints six decimals).
        let keyTimes = Set(keyframes[0].compactMap(Double.init).map { ($0 * 1000).rounded() })
        #expect(starts[0].allSatisfy { keyTimes.contains(($0 * 1000).rounded()) }, "segment starts \(starts[0]) among keyframes \(keyframes[0])")
        // One segment per second of source.
        let gaps = zip(starts[0].dropFirst(), starts[0]).map { $0 - $1 }
        #expect(gaps.allSatisfy { abs($0 - Double(Self.segmentSeconds)) < 0.001 }, "\(starts[0])")
    }

    @Test func theMasterPlaylistDescribesEveryRung() throws {
        let output = try Self.hls.get()
        let master = output.master
        #expect(master.hasPrefix("#EXTM3U"))
        #expect(master.contains("#EXT-X-VERSION:"))
        #expect(master.contains("#EXT-X-INDEPENDENT-SEGMENTS"), "every segment starts with an IDR")
        let audioMedia = try #require(output.media.first { $0["TYPE"] == "AUDIO" }, "an audio rendition group:\n\(master)")
        let group = try #require(audioMedia["GROUP-ID"])
        let audio = try #require(try output.audio())
        #expect(audio.mimeType == "audio/mp4; codecs=\"mp4a.40.2\"")
        #expect(output.variants.count == Self.heights.count, "\(master)")
        for (variant, size) in zip(output.variants, Self.sizes) {
            let a = variant.attributes, rung = try output.rung(variant)
            let peak = try #require(a["BANDWIDTH"].flatMap(Int.init), "\(variant.uri): BANDWIDTH")
            let average = try #require(a["AVERAGE-BANDWIDTH"].flatMap(Int.init), "\(variant.uri): AVERAGE-BANDWIDTH")
            #expect(average > 0 && average <= peak, "\(variant.uri): \(average) over \(peak)")
            let videoCodecs = String(rung.mimeType.components(separatedBy: "codecs=\"").last?.dropLast() ?? "")
            #expect(a["CODECS"]?.lowercased() == "\(videoCodecs),mp4a.40.2".lowercased(), "\(variant.uri): CODECS \(a["CODECS"] ?? "none"), init segment \(videoCodecs)")
            #expect(a["RESOLUTION"] == size, "\(variant.uri)")
            #expect(a["FRAME-RATE"].flatMap(Double.init).map { abs($0 - Double(Self.rate)) < 0.001 } == true, "\(variant.uri): FRAME-RATE \(a["FRAME-RATE"] ?? "none")")
            #expect(a["AUDIO"] == group, "\(variant.uri): AUDIO")
            // The measured rates: the rung's files (and the audio's) over their duration, within 10 %.
            let bits = try (rung.segments + audio.segments).map { 8 * (try FileManager.default.attributesOfItem(atPath: output.path($0))[.size] as! Int) }
                .reduce(0, +)
            let measured = Double(bits) / Double(Self.seconds)
            #expect(abs(Double(average) - measured) <= 0.1 * measured, "\(variant.uri): AVERAGE-BANDWIDTH \(average), the files \(measured)")
        }
        #expect(output.iFrameVariants.count == Self.heights.count, "an I-frame playlist per rung:\n\(master)")
        for (variant, size) in zip(output.iFrameVariants, Self.sizes) {
            #expect(variant.attributes["BANDWIDTH"].flatMap(Int.init) != nil && variant.attributes["CODECS"] != nil, "\(variant.attributes)")
            #expect(variant.attributes["RESOLUTION"].map { $0 == size } != false, "\(variant.attributes)")
            let text = try output.text(variant.uri)
            #expect(text.contains("#EXT-X-I-FRAMES-ONLY") && text.contains("#EXT-X-BYTERANGE:") && text.contains("#EXT-X-ENDLIST"), "\(variant.uri):\n\(text)")
            #expect(text.contains("#EXT-X-MAP:"), "\(variant.uri)")
            // Byte ranges into the rung's own segments, one I-frame per segment at least.
            let directory = (variant.uri as NSString).deletingLastPathComponent
            let uris = text.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("#") && !$0.isEmpty }
            #expect(uris.count >= Self.seconds / Self.segmentSeconds, "\(variant.uri)")
            for uri in Set(uris) {
                #expect(FileManager.default.fileExists(atPath: output.path("\(directory)/\(uri)")), "\(variant.uri): \(uri)")
                #expect(uri.hasSuffix(".m4s"), "\(variant.uri): \(uri) is a media segment")
            }
        }
    }

    @Test func mediaPlaylistsAreCompleteVOD() throws {
        let output = try Self.hls.get()
        let audio = try #require(output.media.first { $0["TYPE"] == "AUDIO" }?["URI"])
        for uri in output.variants.map(\.uri) + [audio] {
            let text = try output.text(uri)
            let lines = text.split(whereSeparator: \.isNewline).map(String.init)
            #expect(lines.first == "#EXTM3U")
            let version = lines.first { $0.hasPrefix("#EXT-X-VERSION:") }.flatMap { Int($0.dropFirst(15)) } ?? 0
            #expect(version >= 6, "\(uri): #EXT-X-MAP in a media playlist needs version 6, it says \(version)")
            #expect(lines.contains("#EXT-X-PLAYLIST-TYPE:VOD"), "\(uri)")
            #expect(lines.last == "#EXT-X-ENDLIST", "\(uri)")
            let map = try #require(lines.first { $0.hasPrefix("#EXT-X-MAP:") }, "\(uri)")
            #expect(LadderFolder.attributes(map)["URI"] == "init.mp4", "\(uri): \(map)")
            let target = try #require(lines.first { $0.hasPrefix("#EXT-X-TARGETDURATION:") }.flatMap { Int($0.dropFirst(22)) }, "\(uri)")
            let durations = lines.filter { $0.hasPrefix("#EXTINF:") }.compactMap { Double($0.dropFirst(8).prefix { $0 != "," }) }
            #expect(durations.count == Self.seconds / Self.segmentSeconds, "\(uri)")
            #expect(durations.allSatisfy { Int($0.rounded()) <= target }, "\(uri): TARGETDURATION \(target), EXTINF \(durations)")
            #expect(abs(durations.reduce(0, +) - Double(Self.seconds)) < 0.05, "\(uri): \(durations)")
        }
    }

    /// libavformat reads the whole presentation through the master playlist without an error.
    @Test func ffmpegReadsTheMasterPlaylist() throws {
        let output = try Self.hls.get()
        let read = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output.path("master.m3u8"), "-map", "0", "-f", "null", "-"])
        #expect(read.status == 0 && read.stderr.isEmpty, "\(read.stderr.suffix(800))")
    }

    /// `--also-dash`: a DASH manifest over the same segments, which libavformat reads whole, every rung with every frame.
    @Test func alsoDASHWritesAnMPDOverTheSameSegments() throws {
        let output = try Self.transcode("ladder-dash", ["--also-dash"])
        let mpd = output.path("manifest.mpd")
        // Each stream once, by index (ffprobe lists them again under the MPD's program).
        let streams = Set(try Tool.ffprobe(["-show_entries", "stream=index,codec_type,codec_name,height", "-of", "csv=p=0", mpd])
            .split(whereSeparator: \.isNewline).map(String.init))
        #expect(streams.filter { $0.contains(",h264,video,") }.count == Self.heights.count, "\(streams.sorted())")
        #expect(streams.filter { $0.contains(",aac,audio") }.count == 1, "\(streams.sorted())")
        let text = try output.text("manifest.mpd")
        #expect(text.contains("segmentAlignment=\"true\""), "\(text)")
        #expect(text.contains("<SegmentTemplate") || text.contains("<SegmentList"), "\(text)")
        #expect(text.contains("contentType=\"audio\""), "an audio AdaptationSet")
        // The MPD names the HLS rungs' own files: no second set of segments.
        for height in Self.heights { #expect(text.contains("\(height)p/"), "\(height)p's folder in the MPD") }
        let files = try FileManager.default.subpathsOfDirectory(atPath: output.folder.path).filter { $0.hasSuffix(".m4s") }
        #expect(files.count == (Self.heights.count + 1) * Self.seconds / Self.segmentSeconds, "\(files.sorted())")
        // libavformat's dash demuxer ends every stream when the first ends: one stream per run.
        for index in Self.heights.indices {
            let line = try Tool.ffprobe(["-count_frames", "-select_streams", "v:\(index)", "-show_entries", "stream=height,nb_read_frames",
                                         "-of", "csv=p=0", mpd]).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
            let fields = line.split(separator: ",").compactMap { Int($0) }
            #expect(fields.count == 2 && Self.heights.contains(fields[0]) && fields[1] == Self.seconds * Self.rate, "manifest.mpd v:\(index): \(line)")
        }
        let read = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", mpd, "-map", "0", "-f", "null", "-"])
        #expect(read.status == 0 && read.stderr.isEmpty, "manifest.mpd: \(read.stderr.suffix(800))")
    }

    /// The audio lasts as long as the source's, and so does every rung's video.
    @Test func audioAndVideoLastAsTheSourcesDo() throws {
        let output = try Self.hls.get()
        let source = try Self.source()
        let sourceAudio = try Probe.span(source, stream: "a:0"), sourceVideo = try Probe.span(source, stream: "v:0")
        let audioURI = try #require(output.media.first { $0["TYPE"] == "AUDIO" }?["URI"])
        let audio = try Probe.span(output.path(audioURI), stream: "a:0")
        let sourceLength = sourceAudio.end - sourceAudio.start, length = audio.end - audio.start
        #expect(abs(length - sourceLength) < 0.05, "audio \(length) s, the source's \(sourceLength) s")
        for variant in output.variants {
            let video = try Probe.span(output.path(variant.uri), stream: "v:0")
            #expect(abs((video.end - video.start) - (sourceVideo.end - sourceVideo.start)) < 0.001, "\(variant.uri): \(video)")
        }
    }

    /// `-o out.mp4 --ladder`: one faststart MP4 per rung beside it, each frame-exact; the rung above the source is
    /// dropped with one line that says so.
    @Test func aFileOutputMakesOneMP4PerRung() throws {
        let sandbox = try Sandbox("ladder-files")
        defer { sandbox.close() }
        let source = try Self.source()
        let made = try Self.tessera(sandbox, ["transcode", source, "-o", sandbox.path("out.mp4"), "--ladder", "720,\(Self.ladder)",
                                              "--preset", "veryfast"])
        try #require(made.status == 0, "\(made.stderr)")
        #expect(made.stderr.split(whereSeparator: \.isNewline).filter { $0.contains("dropped 720") }.count == 1, "\(made.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("out_720p.mp4")), "never upscaled")
        for (height, size) in zip(Self.heights, Self.sizes) {
            let file = sandbox.path("out_\(height)p.mp4")
            #expect(FileManager.default.fileExists(atPath: file), "\(file)")
            let facts = try OutputFacts.read(file)
            #expect(facts.moovBeforeMdat, "\(file): faststart")
            #expect(facts.codecs == ["h264", "aac"], "\(file): \(facts.codecs)")
            #expect(facts.decodeErrors.isEmpty, "\(file): \(facts.decodeErrors)")
            let probed = try Probe.size(file)
            #expect("\(probed.width)x\(probed.height)" == size)
            let check = try Probe.frameExactness(source: source, output: file)
            #expect(check.problems.isEmpty, "\(file): \(check.problems.prefix(5))")
            #expect(check.meanPSNR > 25, "\(file): mean PSNR \(check.meanPSNR) dB")
        }
    }

    /// `--audio-per-rung`: no audio group; each rung's own segments carry the AAC track.
    @Test func audioPerRungMuxesTheAudioIntoEveryRung() throws {
        let sandbox = try Sandbox("ladder-muxed")
        defer { sandbox.close() }
        let folder = sandbox.directory.appendingPathComponent("out")
        let made = try Self.tessera(sandbox, ["transcode", try Self.source(), "-o", folder.appendingPathComponent("master.m3u8").path,
                                              "--ladder", "240,144", "--audio-per-rung", "--hls-time", "2", "--preset", "veryfast"])
        try #require(made.status == 0, "\(made.stderr)")
        let output = try LadderFolder(folder: folder)
        #expect(!output.media.contains { $0["TYPE"] == "AUDIO" }, "\(output.master)")
        #expect(output.variants.count == 2)
        for variant in output.variants {
            #expect(variant.attributes["AUDIO"] == nil)
            let rung = try output.rung(variant)
            #expect(rung.mimeType.contains("avc1.") && rung.mimeType.contains("mp4a.40.2"), "\(variant.uri): \(rung.mimeType)")
            #expect(variant.attributes["CODECS"]?.contains("mp4a.40.2") == true, "\(variant.attributes)")
            let streams = try Tool.ffprobe(["-show_entries", "stream=codec_type", "-of", "csv=p=0", output.path(variant.uri)])
            #expect(streams.contains("audio") && streams.contains("video"), "\(variant.uri): \(streams)")
            #expect(try Probe.frames(output.path(variant.uri)) == Self.seconds * Self.rate)
        }
    }

    /// A source without audio: no audio group, no audio folder.
    @Test func noAudioStreamMeansNoAudioGroup() throws {
        let sandbox = try Sandbox("ladder-silent")
        defer { sandbox.close() }
        let silent = try Fixtures.media("ladder-silent.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=\(Self.rate):duration=2",
                                                              "-c:v", "libx264", "-preset", "ultrafast"])
        let folder = sandbox.directory.appendingPathComponent("out")
        let made = try Self.tessera(sandbox, ["transcode", silent, "-o", folder.appendingPathComponent("master.m3u8").path,
                                              "--ladder", "180,144", "--hls-time", "1", "--preset", "veryfast"])
        try #require(made.status == 0, "\(made.stderr)")
        let output = try LadderFolder(folder: folder)
        #expect(output.media.isEmpty && !output.master.contains("mp4a"), "\(output.master)")
        #expect(output.variants.allSatisfy { $0.attributes["AUDIO"] == nil })
        #expect(!FileManager.default.fileExists(atPath: output.path("audio")))
        for variant in output.variants { #expect(try Probe.frames(output.path(variant.uri)) == 2 * Self.rate) }
    }
}
