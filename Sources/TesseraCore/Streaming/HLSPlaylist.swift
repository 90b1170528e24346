/// A text file of a package, at `path` relative to the folder the manifests are written in.
public struct ManifestFile: Hashable, Sendable {
    public var path: String
    public var contents: String
}

/// HLS for a packaged presentation (RFC 8216 and Apple's HLS authoring specification): the master playlist, a VOD
/// media playlist per rung and for the audio, and an I-frame playlist per rung whose segments all have an I-frame
/// range. Written by hand rather than by libavformat's hls muxer, which leaves CODECS out in some cases, declares no
/// measured BANDWIDTH and writes no I-frame playlists for fMP4.
public enum HLSPlaylist {
    public static let mediaPlaylistName = "index.m3u8"
    public static let iFramePlaylistName = "iframes.m3u8"

    /// Every playlist: the master at `masterPath`, the others in their rendition's folder.
    public static func files(_ presentation: PackagedPresentation, masterPath: String = "master.m3u8") throws(PackagingError) -> [ManifestFile] {
        try presentation.validate()
        var files = [ManifestFile(path: masterPath, contents: try master(presentation))]
        for rung in presentation.video {
            files.append(ManifestFile(path: "\(rung.directory)/\(mediaPlaylistName)", contents: mediaPlaylist(rung.track)))
            if let text = iFramePlaylist(rung.track) {
                files.append(ManifestFile(path: "\(rung.directory)/\(iFramePlaylistName)", contents: text))
            }
        }
        if let audio = presentation.audio {
            files.append(ManifestFile(path: "\(audio.directory)/\(mediaPlaylistName)", contents: mediaPlaylist(audio.track)))
        }
        return files
    }

    /// The master playlist. Its version is the highest its media playlists need, so that a client that accepts
    /// the master can play what it lists.
    public static func master(_ presentation: PackagedPresentation) throws(PackagingError) -> String {
        try presentation.validate()
        let audio = presentation.audio
        let independent = presentation.video.allSatisfy { $0.track.segments.allSatisfy(\.startsWithIDR) }
        var lines = ["#EXTM3U", "#EXT-X-VERSION:\(mediaVersion)"]
        if independent { lines.append("#EXT-X-INDEPENDENT-SEGMENTS") }
        var audioPeak = 0, audioAverage = 0
        if let audio {
            let track = audio.track
            audioPeak = SegmentBitrate.hlsPeak(track.bitrateSamples, timescale: track.timescale, targetDuration: targetDuration(track.segments.map(\.duration), track.timescale))
            audioAverage = SegmentBitrate.average(track.bitrateSamples, timescale: track.timescale)
            var attributes = ["TYPE=AUDIO", "GROUP-ID=\(quoted(audio.groupID))", "NAME=\(quoted(audio.name))"]
            if let language = audio.language { attributes.append("LANGUAGE=\(quoted(language))") }
            attributes += ["DEFAULT=YES", "AUTOSELECT=YES", "CHANNELS=\(quoted(String(audio.format.channels)))",
                           "URI=\(quoted("\(audio.directory)/\(mediaPlaylistName)"))"]
            lines.append("#EXT-X-MEDIA:" + attributes.joined(separator: ","))
        }
        for rung in presentation.video {
            let track = rung.track
            // RFC 8216 4.3.4.2: the largest sum over a playable combination of renditions: this rung plus its audio.
            let peak = SegmentBitrate.hlsPeak(track.bitrateSamples, timescale: track.timescale, targetDuration: targetDuration(track.segments.map(\.duration), track.timescale))
            let average = SegmentBitrate.average(track.bitrateSamples, timescale: track.timescale)
            var codecs = [try rung.codecString()]
            if let format = audio?.format ?? rung.muxedAudio { codecs.append(CodecString.aac(format)) }
            var attributes = ["BANDWIDTH=\(peak + audioPeak)", "AVERAGE-BANDWIDTH=\(average + audioAverage)",
                              "CODECS=\(quoted(codecs.joined(separator: ",")))", "RESOLUTION=\(rung.width)x\(rung.height)",
                              "FRAME-RATE=\(frameRate(rung.frameRate))"]
            if let audio { attributes.append("AUDIO=\(quoted(audio.groupID))") }
            lines.append("#EXT-X-STREAM-INF:" + attributes.joined(separator: ","))
            lines.append("\(rung.directory)/\(mediaPlaylistName)")
        }
        for rung in presentation.video {
            guard let samples = rung.track.iFrameSamples else { continue }
            let track = rung.track
            let peak = SegmentBitrate.hlsPeak(samples, timescale: track.timescale, targetDuration: targetDuration(samples.map(\.duration), track.timescale))
            let codec = try rung.codecString()
            let attributes = ["BANDWIDTH=\(peak)", "CODECS=\(quoted(codec))",
                              "RESOLUTION=\(rung.width)x\(rung.height)", "URI=\(quoted("\(rung.directory)/\(iFramePlaylistName)"))"]
            lines.append("#EXT-X-I-FRAME-STREAM-INF:" + attributes.joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A VOD media playlist over the track's segments, relative to its folder. Version 6: EXT-X-MAP in a playlist
    /// that is not I-frames-only (RFC 8216 section 7).
    public static func mediaPlaylist(_ track: MediaTrack) -> String {
        let durations = track.segments.map(\.duration)
        var lines = ["#EXTM3U", "#EXT-X-VERSION:\(mediaVersion)", "#EXT-X-TARGETDURATION:\(targetDuration(durations, track.timescale))",
                     "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-MAP:URI=\(quoted(track.initialization))"]
        for (index, duration) in durations.enumerated() {
            lines.append("#EXTINF:\(StreamingTime.seconds(duration, timescale: track.timescale)),")
            lines.append(track.fileName(index))
        }
        lines.append("#EXT-X-ENDLIST")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The I-frame playlist: each segment's first IDR as a byte range, lasting until the next one; nil when a
    /// segment has no I-frame range. Version 5: EXT-X-MAP in an I-frames-only playlist; 4 for the byte ranges.
    public static func iFramePlaylist(_ track: MediaTrack) -> String? {
        guard let samples = track.iFrameSamples else { return nil }
        let durations = samples.map(\.duration)
        var lines = ["#EXTM3U", "#EXT-X-VERSION:\(iFrameVersion)", "#EXT-X-TARGETDURATION:\(targetDuration(durations, track.timescale))",
                     "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-I-FRAMES-ONLY", "#EXT-X-MAP:URI=\(quoted(track.initialization))"]
        for (index, segment) in track.segments.enumerated() {
            guard let range = segment.iFrame else { continue }
            lines.append("#EXTINF:\(StreamingTime.seconds(segment.duration, timescale: track.timescale)),")
            lines.append("#EXT-X-BYTERANGE:\(range.length)@\(range.offset)")
            lines.append(track.fileName(index))
        }
        lines.append("#EXT-X-ENDLIST")
        return lines.joined(separator: "\n") + "\n"
    }

    /// EXT-X-TARGETDURATION: the largest EXTINF as printed, rounded to the nearest second (halves up), at least 1.
    /// Rounding the printed value, not the exact one, keeps it at or above every EXTINF a client reads.
    public static func targetDuration(_ durations: [Int64], _ timescale: Int64) -> Int {
        let micros = durations.map { StreamingTime.microseconds($0, timescale: timescale) }.max() ?? 0
        return max(1, Int((micros + 500_000) / 1_000_000))
    }

    static let mediaVersion = 6
    static let iFrameVersion = 5

    /// FRAME-RATE: three decimals, rounded half up.
    static func frameRate(_ rate: Rational) -> String {
        let millis = (2 * Int64(rate.num) * 1000 + Int64(rate.den)) / (2 * Int64(rate.den))
        let fraction = String(millis % 1000)
        return "\(millis / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    private static func quoted(_ text: String) -> String { "\"\(text)\"" }
}
