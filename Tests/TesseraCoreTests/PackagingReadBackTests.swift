import Foundation
import Testing
import TesseraCore

/// Playlists and an MPD written over CMAF segments that ffmpeg's hls muxer made, read back by libavformat (ffprobe).
@Suite struct PackagingReadBackTests {
    private struct Packet {
        var pts: Int64, dts: Int64, duration: Int64?, size: Int64, pos: Int64, key: Bool
    }

    /// The `stream` packets of one segment file, read with its init segment in front.
    private func packets(initSegment: URL, segment: URL, stream: String) throws -> [Packet] {
        let output = try CommandLineTool.ffprobe(["-select_streams", stream, "-show_entries", "packet=pts,dts,duration,size,pos,flags",
                                                  "-of", "compact", "concat:\(initSegment.path)|\(segment.path)"])
        return try output.split(separator: "\n").map { line in
            let fields = compactFields(line)
            guard let pts = fields["pts"].flatMap(Int64.init), let dts = fields["dts"].flatMap(Int64.init),
                  let size = fields["size"].flatMap(Int64.init), let pos = fields["pos"].flatMap(Int64.init) else {
                throw CommandLineTool.Failure(description: "packet line \(line)")
            }
            return Packet(pts: pts, dts: dts, duration: fields["duration"].flatMap(Int64.init), size: size, pos: pos, key: fields["flags"]?.hasPrefix("K") ?? false)
        }
    }

    /// A rendition's track, measured from its files: tick durations and the first sample's byte range from
    /// ffprobe, whether that sample holds an IDR slice from its own NAL units.
    private func measuredTrack(_ folder: URL, stream: String, naming: SegmentNaming) throws -> (track: MediaTrack, packets: Int) {
        let initSegment = folder.appendingPathComponent("init.mp4")
        let initSize = try Int64(Data(contentsOf: initSegment).count)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".m4s") }.sorted()
        let timeBase = try CommandLineTool.ffprobe(["-select_streams", stream, "-show_entries", "stream=time_base", "-of", "csv=p=0",
                                                    "concat:\(initSegment.path)|\(folder.appendingPathComponent(names[0]).path)"])
        let timescale = try #require(Int64(timeBase.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst(2)))
        var segments: [MediaSegment] = [], start: Int64 = 0, count = 0
        for (index, name) in names.enumerated() {
            #expect(naming.fileName(index) == name)
            let url = folder.appendingPathComponent(name)
            let data = try [UInt8](Data(contentsOf: url))
            let list = try packets(initSegment: initSegment, segment: url, stream: stream)
            let first = try #require(list.first), last = try #require(list.last)
            if index == 0 { start = list.map(\.pts).min()! }
            count += list.count
            let sampleStart = Int(first.pos - initSize), sampleEnd = Int(first.pos - initSize + first.size)
            segments.append(MediaSegment(duration: last.dts + (last.duration ?? 0) - first.dts, byteSize: Int64(data.count),
                                         startsWithIDR: first.key && (stream.hasPrefix("a") || containsIDR(data[sampleStart..<sampleEnd])),
                                         iFrame: stream.hasPrefix("v") ? ByteRange(offset: 0, length: Int64(sampleEnd)) : nil))
        }
        return (MediaTrack(timescale: timescale, startTicks: start, naming: naming, segments: segments), count)
    }

    /// An H.264 sample (4-byte NAL lengths) with an IDR slice (NAL type 5).
    private func containsIDR(_ sample: ArraySlice<UInt8>) -> Bool {
        var offset = sample.startIndex
        while offset + 5 <= sample.endIndex {
            let length = sample[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            if sample[offset + 4] & 0x1F == 5 { return true }
            offset += 4 + length
        }
        return false
    }

    /// The `key=value` fields of one line of ffprobe's compact output, after the section name.
    private func compactFields(_ line: Substring) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in line.split(separator: "|").dropFirst() {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        return fields
    }

    /// The streams libavformat finds in `path`, each with the packets it reads when that stream alone is selected:
    /// its dash demuxer ends every stream when the first one ends if they are read together (ffmpeg's own MPDs too).
    private func streams(_ path: String) throws -> [[String: String]] {
        let found = try CommandLineTool.ffprobe(["-show_entries", "stream=index,codec_type,codec_name,width,height", "-of", "compact", path])
        // Lines of the top-level stream sections only (an HLS master also lists its streams under programs).
        return try found.split(separator: "\n").filter { $0.hasPrefix("stream|") }.map { line in
            var stream = compactFields(line)
            let index = stream["index"] ?? ""
            let counted = try CommandLineTool.ffprobe(["-select_streams", index, "-count_packets", "-show_entries", "stream=nb_read_packets", "-of", "compact", path])
            stream["nb_read_packets"] = counted.split(separator: "\n").first { $0.hasPrefix("stream|") }.map(compactFields)?["nb_read_packets"]
            return stream
        }
    }

    @Test func libavformatReadsTheMasterPlaylistAndTheMPDWrittenOverFFmpegsSegments() throws {
        let root = try CommandLineTool.scratchDirectory("packaging")
        defer { try? FileManager.default.removeItem(at: root) }
        let naming = SegmentNaming(prefix: "seg_", digits: 5, suffix: ".m4s", firstNumber: 0)
        func hls(_ folder: String, _ arguments: [String]) throws {
            let dir = root.appendingPathComponent(folder)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try CommandLineTool.ffmpeg(arguments + ["-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod", "-hls_segment_type", "fmp4",
                                                    "-hls_fmp4_init_filename", "init.mp4", "-hls_segment_filename", dir.appendingPathComponent("seg_%05d.m4s").path,
                                                    dir.appendingPathComponent("ffmpeg.m3u8").path])
        }
        // Two rungs with a keyframe every second (closed GOPs, no scene cuts), cut every 2 s: 2 + 2 + 1 s.
        let rungs = [("240p", 320, 240), ("120p", 160, 120)]
        for (name, width, height) in rungs {
            try hls(name, ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "5", "-vf", "scale=\(width):\(height)",
                           "-c:v", "libx264", "-preset", "veryfast", "-profile:v", "main", "-g", "25", "-keyint_min", "25",
                           "-sc_threshold", "0", "-flags", "+cgop"])
        }
        try hls("audio", ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "5", "-ac", "2", "-c:a", "aac"])

        var video: [VideoRendition] = []
        for (name, width, height) in rungs {
            let folder = root.appendingPathComponent(name)
            let (track, count) = try measuredTrack(folder, stream: "v:0", naming: naming)
            #expect(count == 125)
            #expect(track.segments.count == 3 && track.segments.allSatisfy(\.startsWithIDR))
            let initBytes = [UInt8](try Data(contentsOf: folder.appendingPathComponent("init.mp4")))
            video.append(VideoRendition(name: name, width: width, height: height, frameRate: Rational(25, 1),
                                        decoderConfiguration: try #require(mp4BoxPayload("avcC", in: initBytes)), track: track))
        }
        let audioFolder = root.appendingPathComponent("audio")
        let (audioTrack, audioPackets) = try measuredTrack(audioFolder, stream: "a:0", naming: naming)
        let format = try AudioFormat(audioSpecificConfig: CommandLineTool.audioExtradata(audioFolder.appendingPathComponent("init.mp4").path))
        #expect(format == AudioFormat(objectType: 2, channels: 2, sampleRate: 48000))
        let presentation = PackagedPresentation(video: video, audio: AudioRendition(name: "Main", language: "en", format: format, track: audioTrack))

        for file in try HLSPlaylist.files(presentation, masterPath: "master.m3u8") {
            try file.contents.write(to: root.appendingPathComponent(file.path), atomically: true, encoding: .utf8)
        }
        try DASHManifest.render(presentation).write(to: root.appendingPathComponent("manifest.mpd"), atomically: true, encoding: .utf8)
        let master = try String(contentsOf: root.appendingPathComponent("master.m3u8"), encoding: .utf8)
        #expect(master.contains("CODECS=\"avc1.4D40"))
        #expect(master.contains("#EXT-X-INDEPENDENT-SEGMENTS\n"))

        // Every rung and the audio, every packet, through the master playlist and through the MPD.
        for manifest in ["master.m3u8", "manifest.mpd"] {
            let found = try streams(root.appendingPathComponent(manifest).path)
            for (_, width, height) in rungs {
                let stream = found.first { $0["codec_type"] == "video" && $0["width"] == String(width) && $0["height"] == String(height) }
                #expect(stream?["codec_name"] == "h264", "\(manifest): no \(width)x\(height) stream in \(found)")
                #expect(stream?["nb_read_packets"] == "125", "\(manifest): \(String(describing: stream))")
            }
            let audio = found.first { $0["codec_type"] == "audio" }
            #expect(audio?["codec_name"] == "aac", "\(manifest): \(found)")
            #expect(audio?["nb_read_packets"] == String(audioPackets), "\(manifest): \(String(describing: audio))")
        }

        // AVERAGE-BANDWIDTH against the files on disk over the duration libavformat reads from the media playlist.
        for rung in video {
            let folder = root.appendingPathComponent(rung.directory)
            let bytes = try (0..<rung.track.segments.count).reduce(0) { total, index in
                total + (try Data(contentsOf: folder.appendingPathComponent(rung.track.fileName(index))).count)
            }
            let duration = try #require(Double(CommandLineTool.ffprobe(["-show_entries", "format=duration", "-of", "csv=p=0",
                                                                       folder.appendingPathComponent("index.m3u8").path]).trimmingCharacters(in: .whitespacesAndNewlines)))
            let declared = try #require(master.split(separator: "\n").first { $0.contains("RESOLUTION=\(rung.width)x\(rung.height)") && $0.hasPrefix("#EXT-X-STREAM-INF") })
            let average = try #require(declared.split(separator: ",").first { $0.hasPrefix("AVERAGE-BANDWIDTH=") }.flatMap { Double($0.dropFirst(18)) })
            let audioAverage = Double(SegmentBitrate.average(presentation.audio!.track.bitrateSamples, timescale: 48000))
            #expect(abs((average - audioAverage) / (Double(bytes * 8) / duration) - 1) < 0.01)
        }

        // Each I-frame playlist range, put behind the init segment, decodes to exactly the segment's first frame, an I
        // frame of the first packet's size: the range ends where that sample does.
        for rung in video {
            let folder = root.appendingPathComponent(rung.directory)
            let playlist = try String(contentsOf: folder.appendingPathComponent("iframes.m3u8"), encoding: .utf8).split(separator: "\n")
            let initData = try Data(contentsOf: folder.appendingPathComponent("init.mp4"))
            let entries = playlist.indices.filter { playlist[$0].hasPrefix("#EXT-X-BYTERANGE:") }
            #expect(entries.count == 3)
            for line in entries {
                let range = playlist[line].dropFirst(17).split(separator: "@")
                let length = try #require(Int(range[0])), offset = try #require(Int(range[1]))
                let segment = folder.appendingPathComponent(String(playlist[line + 1]))
                let piece = root.appendingPathComponent("iframe.mp4")
                try (initData + Data(contentsOf: segment)[offset..<(offset + length)]).write(to: piece)
                // key_frame, pkt_size, pict_type (and an empty side-data column on some frames).
                let frames = try CommandLineTool.ffprobe(["-select_streams", "v:0", "-show_entries", "frame=key_frame,pict_type,pkt_size",
                                                          "-of", "csv=p=0", piece.path]).split(separator: "\n")
                    .map { $0.split(separator: ",", omittingEmptySubsequences: false).prefix(3).joined(separator: ",") }
                let firstSize = try #require(packets(initSegment: folder.appendingPathComponent("init.mp4"), segment: segment, stream: "v:0").first?.size)
                #expect(frames == ["1,\(firstSize),I"], "\(rung.name) \(segment.lastPathComponent): \(frames)")
            }
        }
    }
}
