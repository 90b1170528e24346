import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

/// A ladder job's encoded segments packaged as HLS/DASH and as one MP4 per rung, verified, moved into place, and
/// read back by ffprobe: frames per rung, IDRs at every packaging cut in every rung, the playlists' tags.
@Suite(.serialized) struct LadderPackagerTests {
    struct EncodedJob {
        var plan: JobPlan
        var segments: [EncodedSegment]
        var audio: AudioTrack?
    }

    /// 4 s of 320x180 testsrc2 at 25 fps with B-frames and AAC, planned as a 180p/120p ladder cut every second, and
    /// every segment encoded as a worker would.
    static func encodedJob(_ packaging: LadderSpec.Packaging, audioPerRung: Bool = false,
                           settings: EncoderSettings = EncoderSettings(preset: "veryfast")) throws -> EncodedJob {
        let source = try Fixtures.media("ladder-pack.mp4", [
            "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
            "-t", "4", "-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-bf", "3", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest",
        ])
        var options = JobOptions(settings: settings, workers: 2)
        options.ladder = LadderSpec(ladder: try Ladder(parsing: "180,120"), packaging: packaging, segmentSeconds: 1, audioPerRung: audioPerRung)
        let plan = try JobPlanner.plan(try MediaProbe.probe(source), options: options)
        var tasks: [SegmentTask] = []
        try SegmentSource(plan: plan).forEachTask { tasks.append($0) }
        let segments = try tasks.sorted { $0.header.segment.index < $1.header.segment.index }.map { try SegmentEncoder.encode($0) }
        return EncodedJob(plan: plan, segments: segments, audio: try AudioTranscoder.run(plan))
    }

    /// Writes and verifies `job`'s outputs for `output`, then moves them into place.
    static func package(_ job: EncodedJob, output: String) throws -> LadderOutput {
        let destination = try #require(LadderOutput(plan: job.plan, output: output))
        let segments = job.segments
        _ = try LadderPackager.package(plan: job.plan, loadSegment: { segments[$0] }, audio: job.audio, into: destination)
        try destination.verify(plan: job.plan, audio: job.audio)
        try destination.commit()
        return destination
    }

    static func lines(_ text: String) -> [String] { text.split(whereSeparator: \.isNewline).map(String.init) }

    /// Video frames, size and the key packets' times (seconds from the first frame) as ffprobe reads `path`.
    static func probe(_ path: String) throws -> (frames: Int, size: String, keys: [Double]) {
        let stream = Self.lines(try Tool.ffprobe(["-count_packets", "-select_streams", "v:0", "-show_entries",
                                                  "stream=nb_read_packets,width,height", "-of", "csv=p=0", path]))
        let fields = try #require(stream.first).split(separator: ",")
        let packets = Self.lines(try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "packet=pts_time,flags", "-of", "csv=p=0", path]))
            .map { $0.split(separator: ",") }
        let times = packets.compactMap { Double($0[0]) }
        let start = try #require(times.min())
        let keys = packets.filter { $0.count > 1 && $0[1].hasPrefix("K") }.compactMap { Double($0[0]) }.map { $0 - start }.sorted()
        return (Int(fields[2])!, "\(fields[0])x\(fields[1])", keys)
    }

    /// The packaging cuts in seconds from the first frame, the first frame included.
    static func cutSeconds(_ plan: JobPlan) -> [Double] {
        [0] + plan.packagingCutTicks.map { plan.output.timeBase.seconds($0 - plan.outputSpan.lowerBound) }
    }

    static func value(_ tag: String, in line: String) -> String? {
        guard let range = line.range(of: tag + "=") else { return nil }
        let rest = line[range.upperBound...]
        if rest.first == "\"" { return String(rest.dropFirst().prefix { $0 != "\"" }) }
        return String(rest.prefix { $0 != "," })
    }

    @Test func hlsAndDashRungsAreFrameExactAlignedAndTagged() throws {
        let job = try Self.encodedJob(.hlsAndDash)
        let ladder = try #require(job.plan.ladder)
        #expect(ladder.names == ["180p", "120p"])
        let cuts = Self.cutSeconds(job.plan)
        #expect(cuts.count == 4, "a cut every second of 4 s")
        let folder = Fixtures.output("ladder-hls")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let output = folder + "/index.m3u8"
        try OutputPath.check(output, input: job.plan.inputPath, ladder: ladder.spec)
        #expect(OutputPath.existing(output, ladder: ladder.spec).isEmpty, "an empty folder may be replaced")
        _ = try Self.package(job, output: output)
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
        #expect(files == ["index.m3u8", "manifest.mpd", "180p", "120p", "audio"], "the master is named as the output")
        #expect(OutputPath.existing(output, ladder: ladder.spec) == [OutputPath.streamingFolder(of: output)])

        var starts: [[Double]] = []
        for (r, name) in ladder.names.enumerated() {
            let playlist = folder + "/\(name)/index.m3u8"
            let read = try Self.probe(playlist)
            let rung = job.plan.forRung(r).output
            #expect(read.frames == job.plan.outputFrameCount && read.frames == 100, "\(name)")
            #expect(read.size == "\(rung.width)x\(rung.height)")
            for cut in cuts { #expect(read.keys.contains { abs($0 - cut) < 0.001 }, "\(name) has an IDR at \(cut) s") }

            let text = try String(contentsOfFile: playlist, encoding: .utf8)
            #expect(text.contains("#EXT-X-MAP:URI=\"init.mp4\"") && text.contains("#EXT-X-PLAYLIST-TYPE:VOD") && text.contains("#EXT-X-ENDLIST"))
            let target = try #require(Self.lines(text).first { $0.hasPrefix("#EXT-X-TARGETDURATION:") }.flatMap { Int($0.split(separator: ":")[1]) })
            let durations = Self.lines(text).filter { $0.hasPrefix("#EXTINF:") }.compactMap { Double($0.dropFirst(8).prefix { $0 != "," }) }
            #expect(durations.count == cuts.count)
            #expect(durations.allSatisfy { Int($0.rounded()) <= target }, "TARGETDURATION \(target) ≥ every rounded EXTINF \(durations)")
            starts.append(durations.indices.map { durations[..<$0].reduce(0, +) })
        }
        #expect(starts[0] == starts[1], "every rung's segments start at the same instants")
        for (start, cut) in zip(starts[0], cuts) { #expect(abs(start - cut) < 0.001) }

        let master = try String(contentsOfFile: folder + "/index.m3u8", encoding: .utf8)
        let variants = Self.lines(master).filter { $0.hasPrefix("#EXT-X-STREAM-INF:") }
        #expect(variants.count == 2)
        for variant in variants {
            #expect(Int(Self.value("BANDWIDTH", in: variant) ?? "") ?? 0 > 0)
            #expect(Int(Self.value("AVERAGE-BANDWIDTH", in: variant) ?? "") ?? 0 > 0)
            let codecs = try #require(Self.value("CODECS", in: variant))
            #expect(codecs.hasPrefix("avc1.") && codecs.hasSuffix(",mp4a.40.2"), "\(codecs)")
        }
        #expect(master.contains("#EXT-X-MEDIA:TYPE=AUDIO") && master.contains("#EXT-X-INDEPENDENT-SEGMENTS"))
        let mpd = try String(contentsOfFile: folder + "/manifest.mpd", encoding: .utf8)
        #expect(mpd.contains("segmentAlignment=\"true\"") && mpd.contains("contentType=\"audio\""))
        // libavformat's own demuxers read the master (every rung and the audio) and the MPD.
        let streams = Set(Self.lines(try Tool.ffprobe(["-show_entries", "stream=index,codec_type", "-of", "csv=p=0", folder + "/manifest.mpd"])))
        #expect(streams.filter { $0.hasSuffix(",video") }.count == 2 && streams.filter { $0.hasSuffix(",audio") }.count == 1, "\(streams)")
    }

    @Test func dashAloneWritesOnlyItsManifestAndMuxesAudioPerRung() throws {
        let job = try Self.encodedJob(.dash, audioPerRung: true)
        let folder = Fixtures.output("ladder-dash")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let destination = try Self.package(job, output: folder + "/stream.mpd")
        #expect(destination.masterName == nil && destination.manifestName == "stream.mpd")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder)) == ["stream.mpd", "180p", "120p"])
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: folder + "/180p")).contains { $0.hasSuffix(".m3u8") })
        let mpd = try String(contentsOfFile: folder + "/stream.mpd", encoding: .utf8)
        #expect(mpd.components(separatedBy: ",mp4a.40.2\"").count == 3, "each rung's codecs name its AAC")
        #expect(!mpd.contains("contentType=\"audio\""), "no audio of its own")
        // Each rung as a DASH client appends it: its init segment, then its media segments.
        for name in ["180p", "120p"] {
            let joined = folder + "/\(name).mp4"
            let files = try FileManager.default.contentsOfDirectory(atPath: folder + "/" + name).filter { $0.hasSuffix(".m4s") }.sorted()
            let data = try (["init.mp4"] + files).reduce(into: Data()) { $0.append(try Data(contentsOf: URL(fileURLWithPath: folder + "/\(name)/\($1)"))) }
            try data.write(to: URL(fileURLWithPath: joined))
            #expect(try Self.probe(joined).frames == 100)
            let streams = Self.lines(try Tool.ffprobe(["-show_entries", "stream=codec_type", "-of", "csv=p=0", joined]))
            #expect(streams == ["video", "audio"], "\(name) carries the audio")
        }
    }

    @Test func hlsWithAudioPerRungHasNoAudioGroup() throws {
        let job = try Self.encodedJob(.hls, audioPerRung: true)
        let folder = Fixtures.output("ladder-hls-muxed")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try Self.package(job, output: folder + "/master.m3u8")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder)) == ["master.m3u8", "180p", "120p"])
        let master = try String(contentsOfFile: folder + "/master.m3u8", encoding: .utf8)
        #expect(!master.contains("#EXT-X-MEDIA:TYPE=AUDIO") && master.contains("mp4a.40.2"))
        for name in ["180p", "120p"] {
            let streams = Self.lines(try Tool.ffprobe(["-show_entries", "stream=codec_type", "-of", "csv=p=0", folder + "/\(name)/index.m3u8"]))
            #expect(Set(streams) == ["video", "audio"], "\(name) carries the audio")
        }
    }

    @Test func aDamagedSegmentFailsVerificationAndNothingIsPlaced() throws {
        let job = try Self.encodedJob(.hls)
        let folder = Fixtures.output("ladder-damaged")
        let destination = try #require(LadderOutput(plan: job.plan, output: folder + "/master.m3u8"))
        defer { destination.discard() }
        let segments = job.segments
        _ = try LadderPackager.package(plan: job.plan, loadSegment: { segments[$0] }, audio: job.audio, into: destination)
        try destination.verify(plan: job.plan, audio: job.audio)
        // Cuts a fifth of a second later than the IDRs the rungs hold are refused.
        var moved = job.plan
        let shift = Int64((0.2 / moved.cuts.timeBase.doubleValue).rounded())
        moved.cuts.packagingCuts = moved.cuts.packagingCuts?.map { $0 + shift }
        #expect { try destination.verify(plan: moved, audio: job.audio) } throws: {
            ($0 as? TesseraError)?.kind == .verification && "\($0)".contains("has no IDR")
        }
        let segment = destination.temporaryFolder + "/120p/" + CMAFWriter.segmentName(1)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: segment))
        #expect { try destination.verify(plan: job.plan, audio: job.audio) } throws: {
            ($0 as? TesseraError)?.kind == .verification
        }
        destination.discard()
        #expect(!FileManager.default.fileExists(atPath: destination.temporaryFolder))
        #expect(!FileManager.default.fileExists(atPath: folder))

        // A result in the wrong place is refused naming the segment, so that it can be encoded again.
        try #require(segments.count >= 3)
        var misplaced = segments
        misplaced.swapAt(1, 2)
        #expect { try LadderPackager.package(plan: job.plan, loadSegment: { misplaced[$0] }, audio: job.audio, into: destination) } throws: {
            ($0 as? TesseraError)?.segment == 1
        }
    }

    @Test func filesAreOneFaststartMP4PerRungWithAlignedIDRs() throws {
        let job = try Self.encodedJob(.files)
        let output = Fixtures.output("ladder.mp4")
        let destination = try Self.package(job, output: output)
        defer { destination.removePlaced() }
        #expect(destination.places.map { URL(fileURLWithPath: $0).lastPathComponent }
            == ["180p", "120p"].map { URL(fileURLWithPath: output).deletingPathExtension().lastPathComponent + "_\($0).mp4" })
        #expect(!FileManager.default.fileExists(atPath: output))
        let cuts = Self.cutSeconds(job.plan)
        for (r, path) in destination.places.enumerated() {
            let read = try Self.probe(path)
            #expect(read.frames == 100)
            #expect(read.size == "\(job.plan.forRung(r).output.width)x\(job.plan.forRung(r).output.height)")
            for cut in cuts { #expect(read.keys.contains { abs($0 - cut) < 0.001 }, "\(path) has an IDR at \(cut) s") }
        }
    }
}
