import Foundation
import Testing
import TesseraCore
import TesseraEngine
import TesseraTestSupport

/// Tessera's own ladder end to end: two libx264 rungs and an AAC rendition written by `CMAFWriter`, described by
/// `PackagedPresentation(cmafRungs:)`, their playlists and MPD written by `StreamingPackage`, then read by ffprobe
/// and played by Chromium through MSE.
@Suite(.serialized) struct StreamingPackageTests {
    static let seconds = 6
    static let heights = [180, 90]

    struct Package: Sendable {
        var folder: URL
        var ladder: CMAFFixtures.Ladder
        var paths: [String]
    }

    static let package = Result { () throws -> Package in
        let folder = Fixtures.directory.appendingPathComponent("streaming-package")
        try? FileManager.default.removeItem(at: folder)
        let ladder = try CMAFFixtures.writeLadder(to: folder.path, heights: heights, seconds: seconds, keyframeSeconds: 1, segmentSeconds: 2)
        let rungs = zip(heights, zip(ladder.rungs, ladder.videos)).map { CMAFRung(name: "\($0)p", rendition: $1.0, video: $1.1) }
        let presentation = try PackagedPresentation(cmafRungs: rungs, audio: ladder.audio, audioParameters: ladder.audioTrack?.parameters,
                                                    language: "en", root: folder.path)
        return Package(folder: folder, ladder: ladder, paths: try StreamingPackage.write(presentation, to: folder.path))
    }

    /// Frames (or packets, for audio) of one stream, by ffprobe; the first line (HLS lists a stream again under its program).
    static func count(_ input: String, stream: String, entry: String = "nb_read_frames", extra: [String] = ["-count_frames"]) throws -> [String] {
        let text = try Tool.ffprobe(extra + ["-select_streams", stream, "-show_entries", "stream=height,\(entry)", "-of", "csv=p=0", input])
        guard let line = text.split(whereSeparator: \.isNewline).first else { throw ToolError("ffprobe \(stream) of \(input): nothing") }
        return line.split(separator: ",").map(String.init)
    }

    /// The presentation span of one media segment, read by ffprobe from its init segment and it joined into one file.
    static func span(_ folder: URL, _ rung: MSEPlayer.Rung, segment: Int) throws -> (start: Double, end: Double) {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-span-\(UUID().uuidString.prefix(8)).mp4")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try (Data(contentsOf: folder.appendingPathComponent(rung.initSegment)) + Data(contentsOf: folder.appendingPathComponent(rung.segments[segment])))
            .write(to: scratch)
        // pts and duration per packet; the first AAC packet of a fragment may read without a duration.
        let rows = try Tool.ffprobe(["-show_entries", "packet=pts_time,duration_time", "-of", "csv=p=0", scratch.path])
            .split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) } }
        let starts = rows.compactMap { $0.first ?? nil }
        let ends = rows.compactMap { row -> Double? in row.count == 2 ? row[0].flatMap { pts in row[1].map { pts + $0 } } : nil }
        guard let start = starts.min(), let end = ends.max() else {
            throw ToolError("no packets in \(rung.segments[segment])")
        }
        return (start, end)
    }

    static func rungs(_ package: Package) throws -> [MSEPlayer.Rung] {
        try heights.map { try MSEPlayer.Rung.hls("rung_\($0)/index.m3u8", in: package.folder, name: "\($0)p") }
    }

    /// A playback that reached the end with every frame decoded and one buffered video range, which it returns.
    static func expectPlayedWhole(_ report: PlaybackReport, appends: Int, _ label: String) throws -> ClosedRange<Double> {
        #expect(report.error == nil && report.ended, "\(label): \(report)")
        #expect(report.appended == appends, "\(label): \(report)")
        #expect(report.totalVideoFrames == seconds * 30 && report.corruptedVideoFrames == 0, "\(label): every frame decoded: \(report)")
        let buffered = try #require(report.bufferedAfterAppends)
        #expect(buffered.count == 1, "\(label): one gap-free range: \(report)")
        return try #require(buffered.first)
    }

    @Test func writesThePlaylistsAndTheManifestBesideTheFolders() throws {
        let package = try Self.package.get()
        let expected = ["master.m3u8", "rung_180/index.m3u8", "rung_180/iframes.m3u8", "rung_90/index.m3u8", "rung_90/iframes.m3u8",
                        "audio/index.m3u8", "manifest.mpd"].map { package.folder.appendingPathComponent($0).path }
        #expect(package.paths == expected)
        for path in package.paths { #expect(FileManager.default.fileExists(atPath: path), "\(path)") }

        // CODECS as the init segments say (read by the harness from avcC and esds), rung and audio.
        let master = try String(contentsOf: package.folder.appendingPathComponent("master.m3u8"), encoding: .utf8)
        let audio = try MSEPlayer.Rung.hls("audio/index.m3u8", in: package.folder)
        let codecs = { (rung: MSEPlayer.Rung) in String(rung.mimeType.components(separatedBy: "codecs=\"").last?.dropLast() ?? "") }
        for rung in try Self.rungs(package) {
            #expect(master.contains("CODECS=\"\(codecs(rung)),\(codecs(audio))\""), "\(rung.mimeType) in\n\(master)")
        }

        // Each track's S@t is where ffprobe finds its first sample: the video one decode delay after 0, not 0.
        let mpd = try String(contentsOf: package.folder.appendingPathComponent("manifest.mpd"), encoding: .utf8)
        let starts = mpd.components(separatedBy: "<SegmentTemplate timescale=\"").dropFirst().map { block -> Double in
            let timescale = Double(block.prefix { $0 != "\"" })!
            let t = block.components(separatedBy: "<S t=\"")[1].prefix { $0 != "\"" }
            return Double(t)! / timescale
        }
        let probed = try (Self.rungs(package) + [audio]).map { try Self.span(package.folder, $0, segment: 0).start }
        #expect(starts.count == probed.count)
        for (declared, found) in zip(starts, probed) { #expect(abs(declared - found) < 0.0005, "S@t \(declared) s, first sample at \(found) s") }
        #expect(probed[0] > 0, "libx264's B-frames delay the first picture")
    }

    /// (a) ffprobe reads every rung (and the audio) whole through the master playlist and through the MPD. One stream
    /// per run: libavformat's dash demuxer ends every stream when the first one ends.
    @Test func ffprobeReadsEveryFrameThroughBothManifests() throws {
        let package = try Self.package.get()
        let sourceFrames = try package.ladder.clips.map { try Self.count($0, stream: "v:0") }
        let sourceAudio = try Self.count(package.ladder.clips[0], stream: "a:0", entry: "nb_read_packets", extra: ["-count_packets"])
        #expect(sourceFrames.allSatisfy { $0[1] == String(Self.seconds * 30) }, "\(sourceFrames)")
        for manifest in ["master.m3u8", "manifest.mpd"] {
            let input = package.folder.appendingPathComponent(manifest).path
            let read = try Self.heights.indices.map { try Self.count(input, stream: "v:\($0)") }
            #expect(Set(read.map { $0[0] }) == Set(Self.heights.map(String.init)), "\(manifest): every rung listed: \(read)")
            for (height, frames) in sourceFrames.map({ ($0[0], $0[1]) }) {
                #expect(read.first { $0[0] == height }?[1] == frames, "\(manifest): rung \(height) has the source's \(frames) frames: \(read)")
            }
            let audio = try Self.count(input, stream: "a:0", entry: "nb_read_packets", extra: ["-count_packets"])
            #expect(audio.last == sourceAudio.last, "\(manifest): every AAC frame: \(audio) against \(sourceAudio)")
        }
    }

    /// (e) BANDWIDTH and AVERAGE-BANDWIDTH against the files: sizes on disk over the spans ffprobe reads, rung plus audio.
    @Test func declaredBandwidthsMatchTheFiles() throws {
        let package = try Self.package.get()
        let folder = package.folder
        let audio = try MSEPlayer.Rung.hls("audio/index.m3u8", in: folder)
        func measure(_ rung: MSEPlayer.Rung) throws -> (peak: Double, average: Double) {
            var bits = 0.0, seconds = 0.0, peak = 0.0
            for index in rung.segments.indices {
                let size = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(rung.segments[index]).path)[.size] as! Int
                let span = try Self.span(folder, rung, segment: index)
                bits += Double(8 * size)
                seconds += span.end - span.start
                peak = max(peak, Double(8 * size) / (span.end - span.start))
            }
            return (peak, bits / seconds)
        }
        let audioRate = try measure(audio)
        let master = try String(contentsOf: folder.appendingPathComponent("master.m3u8"), encoding: .utf8)
        let lines = master.split(whereSeparator: \.isNewline).map(String.init)
        /// A STREAM-INF attribute's value: attributes split at commas outside quoted strings.
        func attribute(_ name: String, _ line: String) -> Double? {
            var pairs: [String] = [""], quoted = false
            for character in line.drop(while: { $0 != ":" }).dropFirst() {
                if character == "\"" { quoted.toggle() }
                if character == ",", !quoted { pairs.append("") } else { pairs[pairs.count - 1].append(character) }
            }
            return pairs.first { $0.hasPrefix(name + "=") }.flatMap { Double($0.dropFirst(name.count + 1)) }
        }
        var checked = 0
        for (index, line) in lines.enumerated() where line.hasPrefix("#EXT-X-STREAM-INF:") {
            let rung = try MSEPlayer.Rung.hls(lines[index + 1], in: folder)
            let video = try measure(rung)
            let peak = try #require(attribute("BANDWIDTH", line)), average = try #require(attribute("AVERAGE-BANDWIDTH", line))
            let measuredPeak = video.peak + audioRate.peak, measuredAverage = video.average + audioRate.average
            #expect(abs(peak - measuredPeak) <= 0.1 * measuredPeak, "\(lines[index + 1]): BANDWIDTH \(peak), measured \(measuredPeak)")
            #expect(abs(average - measuredAverage) <= 0.1 * measuredAverage, "\(lines[index + 1]): AVERAGE-BANDWIDTH \(average), measured \(measuredAverage)")
            #expect(peak <= 2 * average, "VOD peak within twice the average")
            checked += 1
        }
        #expect(checked == Self.heights.count)
    }

    /// (b) Each rung, read from Tessera's media playlist, plays in Chromium to the end with every frame decoded.
    @Test(.chromium) func eachRungPlaysEveryFrame() throws {
        let package = try Self.package.get()
        for (rung, written) in zip(try Self.rungs(package), package.ladder.rungs) {
            let report = try MSEPlayer.play(folder: package.folder, rung: rung)
            #expect(report.supported[rung.mimeType] == true, "\(rung.mimeType) in MSE")
            let range = try Self.expectPlayedWhole(report, appends: rung.segments.count + 1, rung.name)
            #expect(abs(range.upperBound - range.lowerBound - Double(Self.seconds)) < 1.0 / 60, "the range spans every frame: \(report)")
            // The video starts one decode delay after 0, where the writer's first segment (and the MPD's S@t) says.
            let start = Double(written.segments[0].startTicks) * written.timeBase.doubleValue
            #expect(start > 0 && abs(range.lowerBound - start) < 0.001, "buffered from \(start) s: \(report)")
        }
    }

    /// (c) Switching rung at every segment boundary keeps one gap-free range, the same as one whole rung's, and plays through.
    @Test(.chromium) func switchingAtEverySegmentKeepsOneRange() throws {
        let package = try Self.package.get()
        let rungs = try Self.rungs(package)
        #expect(rungs[0].segments.count == 3)
        let single = try MSEPlayer.play(folder: package.folder, rung: rungs[0])
        let report = try MSEPlayer.playSwitching(folder: package.folder, rungs: rungs)
        let range = try Self.expectPlayedWhole(report, appends: 2 * rungs[0].segments.count, "switching (an init before every segment)")
        let whole = try #require(single.bufferedAfterAppends?.first)
        #expect(abs(range.lowerBound - whole.lowerBound) < 0.001 && abs(range.upperBound - whole.upperBound) < 0.001,
                "the range of one whole rung: \(range) against \(whole)")
    }

    /// (d) A rung with the audio group the master names plays to the end, the audio gap-free.
    @Test(.chromium) func aRungWithTheAudioGroupPlays() throws {
        let package = try Self.package.get()
        let master = try String(contentsOf: package.folder.appendingPathComponent("master.m3u8"), encoding: .utf8)
        let media = try #require(master.split(whereSeparator: \.isNewline).first { $0.hasPrefix("#EXT-X-MEDIA:TYPE=AUDIO") })
        let uri = try #require(media.components(separatedBy: "URI=\"").last?.split(separator: "\"").first)
        let audio = try MSEPlayer.Rung.hls(String(uri), in: package.folder, name: "audio")
        #expect(audio.mimeType == "audio/mp4; codecs=\"mp4a.40.2\"")
        let video = try Self.rungs(package)[0]
        let report = try MSEPlayer.play(folder: package.folder, rung: video, audio: audio)
        _ = try Self.expectPlayedWhole(report, appends: video.segments.count + audio.segments.count + 2, "with audio")
        #expect(report.audioBufferedAfterAppends?.count == 1, "gap-free audio: \(report)")
        // Chromium buffers the audio from its tfdt, the MPD's S@t and the writer's first segment start.
        let audioStart = try #require(package.ladder.audio?.segments.first)
        let declared = Double(audioStart.startTicks) * (package.ladder.audio?.timeBase.doubleValue ?? 0)
        #expect(abs((report.audioBufferedAfterAppends?.first?.lowerBound ?? -1) - declared) < 0.001, "audio from \(declared) s: \(report)")
    }

    /// The mapping refuses a rendition folder outside the root the manifests are written in.
    @Test func aFolderOutsideTheRootIsRefused() throws {
        let package = try Self.package.get()
        let rung = CMAFRung(name: "180p", rendition: package.ladder.rungs[0], video: package.ladder.videos[0])
        #expect { try PackagedPresentation(cmafRungs: [rung], root: package.folder.appendingPathComponent("audio").path) } throws: {
            ($0 as? StreamingPackageError)?.code == .layout
        }
    }

    /// libx264's extradata is Annex B (start codes, SPS then PPS), not an avcC record: the rung's CODECS is the same.
    @Test func annexBExtradataGivesTheSameCodecs() throws {
        let package = try Self.package.get()
        let avcC = package.ladder.videos[0].parameters.extradata
        try #require(avcC.first == 1 && avcC[5] & 0x1F == 1, "one SPS in the fixture's avcC")
        let spsLength = Int(avcC[6]) << 8 | Int(avcC[7])
        let sps = Array(avcC[8..<(8 + spsLength)])
        let ppsAt = 8 + spsLength + 1
        let pps = Array(avcC[(ppsAt + 2)..<(ppsAt + 2 + (Int(avcC[ppsAt]) << 8 | Int(avcC[ppsAt + 1])))])
        var video = package.ladder.videos[0]
        video.parameters.extradata = [0, 0, 0, 1] + sps + [0, 0, 1] + pps
        let rung = CMAFRung(name: "180p", rendition: package.ladder.rungs[0], video: video)
        let presentation = try PackagedPresentation(cmafRungs: [rung], root: package.folder.path)
        #expect(presentation.video[0].decoderConfiguration == sps)
        #expect(try CodecString.avc(presentation.video[0].decoderConfiguration) == CodecString.avc(avcC))
    }

    /// A rung cut elsewhere is refused by the manifest writers' alignment check; a segment that does not start where
    /// the one before ends is refused by the mapping (one S@t could not place it).
    @Test func misplacedSegmentsAreRefused() throws {
        let package = try Self.package.get()
        let scratch = package.folder.appendingPathComponent("refused")
        var moved = package.ladder.rungs[1]
        moved.segments[0].durationTicks += 512
        moved.segments[1].startTicks += 512
        moved.segments[1].durationTicks -= 512
        let rungs = [CMAFRung(name: "180p", rendition: package.ladder.rungs[0], video: package.ladder.videos[0]),
                     CMAFRung(name: "90p", rendition: moved, video: package.ladder.videos[1])]
        let presentation = try PackagedPresentation(cmafRungs: rungs, root: package.folder.path)
        #expect { try StreamingPackage.write(presentation, to: scratch.path) } throws: {
            ($0 as? StreamingPackageError)?.packaging?.code == .misalignedSegment
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.path), "nothing written")
        var gap = package.ladder.rungs[1]
        gap.segments[1].startTicks += 512
        #expect { try PackagedPresentation(cmafRungs: [CMAFRung(name: "90p", rendition: gap, video: package.ladder.videos[1])], root: package.folder.path) } throws: {
            ($0 as? StreamingPackageError)?.code == .layout
        }
    }
}
