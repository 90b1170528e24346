import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

/// HEVC and AV1 ladders to HLS: every rung frame-exact, keyframes a decoder starts from at every packaging cut in
/// every rung, CODECS as ffprobe reads the stream (profile, level, tier), and the master read by libavformat.
@Suite(.serialized) struct LadderCodecTests {
    static func settings(_ codec: VideoCodec) -> EncoderSettings {
        var settings = EncoderSettings(preset: codec == .av1 ? "12" : "veryfast", crf: codec.defaultCRF, profile: "main")
        settings.codec = codec
        return settings
    }

    /// ffprobe's profile, level and tag of the video in `path`.
    static func stream(_ path: String) throws -> (profile: String, level: Int, tag: String, pixelFormat: String) {
        let line = LadderPackagerTests.lines(try Tool.ffprobe(["-select_streams", "v:0", "-show_entries",
            "stream=profile,level,codec_tag_string,pix_fmt", "-of", "default=nw=1", path]))
        // A playlist's stream is listed again under its program: the first listing counts.
        let fields = Dictionary(line.compactMap { entry -> (String, String)? in
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            return parts.count == 2 ? (parts[0], parts[1]) : nil
        }, uniquingKeysWith: { first, _ in first })
        return (fields["profile"] ?? "", Int(fields["level"] ?? "") ?? -1, fields["codec_tag_string"] ?? "", fields["pix_fmt"] ?? "")
    }

    @Test(arguments: [VideoCodec.hevc, .av1])
    func aLadderToHLSIsFrameExactAlignedAndNamesItsCodec(codec: VideoCodec) throws {
        let job = try LadderPackagerTests.encodedJob(.hls, settings: Self.settings(codec))
        let ladder = try #require(job.plan.ladder)
        #expect(ladder.names == ["180p", "120p"])
        if codec == .av1 { #expect(job.plan.cuts.segments.count == 4, "an AV1 ladder encodes each packaging segment on its own") }
        let cuts = LadderPackagerTests.cutSeconds(job.plan)
        #expect(cuts.count == 4)
        let folder = Fixtures.output("ladder-\(codec.rawValue)")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        // Packaging verifies the folder too: every rung's frames, its codec and a decoder start at every cut.
        _ = try LadderPackagerTests.package(job, output: folder + "/master.m3u8")

        let master = try String(contentsOfFile: folder + "/master.m3u8", encoding: .utf8)
        let variants = LadderPackagerTests.lines(master).filter { $0.hasPrefix("#EXT-X-STREAM-INF:") }
        #expect(variants.count == 2)
        for (r, name) in ladder.names.enumerated() {
            let playlist = folder + "/\(name)/index.m3u8"
            let read = try LadderPackagerTests.probe(playlist)
            #expect(read.frames == job.plan.outputFrameCount && read.frames == 100, "\(name)")
            for cut in cuts { #expect(read.keys.contains { abs($0 - cut) < 0.001 }, "\(name) has a keyframe at \(cut) s") }

            let facts = try Self.stream(playlist)
            let variant = try #require(variants.first { $0.contains("RESOLUTION=\(job.plan.forRung(r).output.width)x") })
            let codecs = try #require(LadderPackagerTests.value("CODECS", in: variant)).split(separator: ",").map(String.init)
            #expect(codecs.last == "mp4a.40.2")
            let fields = codecs[0].split(separator: ".").map(String.init)
            #expect(facts.profile == "Main" && facts.pixelFormat == "yuv420p")
            switch codec {
            case .hevc:
                // hvc1.1.6.L<level_idc>.<constraints>: Main is profile 1, compatible with Main and Main 10 (0x6 reversed).
                #expect(fields.count >= 4 && fields[0] == "hvc1" && fields[1] == "1" && fields[2] == "6", "\(codecs[0])")
                #expect(fields[3] == "L\(facts.level)", "\(codecs[0]) against ffprobe's level \(facts.level)")
                #expect(facts.tag == "hvc1")
                let pinned = try #require(ladder.resolved.rungs[r].level.flatMap { HEVCLevel.named($0.name) })
                #expect(facts.level == pinned.idc, "x265 writes the level the rung was pinned to")
            case .av1:
                // av01.0.<seq_level_idx>M.08: Main profile, Main tier, 8 bits.
                #expect(fields == ["av01", "0", String(format: "%02dM", facts.level), "08"], "\(codecs[0]) against ffprobe's level \(facts.level)")
                #expect(facts.tag == "av01")
            case .h264: break
            }
        }
        // libavformat's HLS demuxer reads the master: every rung and the audio.
        let streams = Set(LadderPackagerTests.lines(try Tool.ffprobe(["-show_entries", "stream=index,codec_name,codec_type", "-of", "csv=p=0",
                                                                      folder + "/master.m3u8"])))
        #expect(streams.filter { $0.hasSuffix(",\(codec.rawValue),video") }.count == 2, "\(streams)")
        #expect(streams.filter { $0.hasSuffix(",aac,audio") }.count == 1, "\(streams)")
    }

    @Test func anHEVCLadderToFilesMakesOneHvc1FilePerRung() throws {
        let job = try LadderPackagerTests.encodedJob(.files, settings: Self.settings(.hevc))
        let output = Fixtures.output("ladder-hevc.mp4")
        let destination = try LadderPackagerTests.package(job, output: output)
        defer { destination.removePlaced() }
        #expect(destination.places.count == 2)
        for path in destination.places {
            #expect(try LadderPackagerTests.probe(path).frames == 100)
            #expect(try Self.stream(path).tag == "hvc1")
        }
    }
}
