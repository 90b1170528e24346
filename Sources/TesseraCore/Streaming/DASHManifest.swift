/// A static DASH MPD (ISO/IEC 23009-1, DASH-IF IOP) over the same CMAF files as the HLS playlists. The live profile
/// (`isoff-live:2011`) because each segment is its own file named by `$Number$`; the on-demand profile wants one
/// file per representation indexed by a `sidx`. Timing is exact: a `SegmentTimeline` in each track's timescale.
public enum DASHManifest {
    public static let profile = "urn:mpeg:dash:profile:isoff-live:2011"

    public static func render(_ presentation: PackagedPresentation) throws(PackagingError) -> String {
        try presentation.validate()
        let tracks = presentation.video.map(\.track) + (presentation.audio.map { [$0.track] } ?? [])
        // The presentation lasts as long as its longest track (AAC frames rarely end where the video does).
        let duration = tracks.map { Seconds(ticks: $0.startTicks + $0.totalDuration, timescale: $0.timescale) }.max()!
        // minBufferTime: the longest segment, with which each Representation's bandwidth (its densest segment)
        // delivers every segment in time.
        let buffer = tracks.flatMap { track in track.segments.map { Seconds(ticks: $0.duration, timescale: track.timescale) } }.max()!
        var xml = XMLWriter()
        xml.line("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        xml.open("MPD", ["xmlns": "urn:mpeg:dash:schema:mpd:2011", "profiles": profile, "type": "static",
                         "mediaPresentationDuration": StreamingTime.isoDuration(duration.ticks, timescale: duration.timescale),
                         "minBufferTime": StreamingTime.isoDuration(buffer.ticks, timescale: buffer.timescale)],
                 order: ["xmlns", "profiles", "type", "mediaPresentationDuration", "minBufferTime"])
        xml.open("Period", ["id": "0", "start": "PT0S"], order: ["id", "start"])
        try videoAdaptationSet(presentation.video, into: &xml)
        if let audio = presentation.audio { audioAdaptationSet(audio, into: &xml) }
        xml.close("Period")
        xml.close("MPD")
        return xml.text
    }

    private static func videoAdaptationSet(_ rungs: [VideoRendition], into xml: inout XMLWriter) throws(PackagingError) {
        let independent = rungs.allSatisfy { $0.track.segments.allSatisfy(\.startsWithIDR) }
        let fastest = rungs.map(\.frameRate).max { (a: Rational, b: Rational) -> Bool in
            Int64(a.num) * Int64(b.den) < Int64(b.num) * Int64(a.den)
        }!
        let maxWidth = rungs.map(\.width).max()!, maxHeight = rungs.map(\.height).max()!
        var attributes: [String: String] = ["id": "0", "contentType": "video", "mimeType": "video/mp4", "segmentAlignment": "true",
                                            "maxWidth": String(maxWidth), "maxHeight": String(maxHeight), "maxFrameRate": frameRate(fastest)]
        // SAP type 1: every segment opens on an IDR with no leading pictures (closed GOP).
        if independent { attributes["startWithSAP"] = "1" }
        xml.open("AdaptationSet", attributes, order: ["id", "contentType", "mimeType", "segmentAlignment", "startWithSAP", "maxWidth", "maxHeight", "maxFrameRate"])
        for rung in rungs {
            var codecs = [try rung.codecString()]
            if let muxed = rung.muxedAudio { codecs.append(CodecString.aac(muxed)) }
            xml.open("Representation", ["id": rung.name, "bandwidth": String(bandwidth(rung.track)), "width": String(rung.width),
                                        "height": String(rung.height), "frameRate": frameRate(rung.frameRate),
                                        "sar": "\(rung.sampleAspectRatio.num):\(rung.sampleAspectRatio.den)", "codecs": codecs.joined(separator: ",")],
                     order: ["id", "bandwidth", "width", "height", "frameRate", "sar", "codecs"])
            if let muxed = rung.muxedAudio { channelConfiguration(muxed, into: &xml) }
            segmentTemplate(rung.track, directory: rung.directory, into: &xml)
            xml.close("Representation")
        }
        xml.close("AdaptationSet")
    }

    private static func audioAdaptationSet(_ audio: AudioRendition, into xml: inout XMLWriter) {
        var attributes = ["id": "1", "contentType": "audio", "mimeType": "audio/mp4", "segmentAlignment": "true", "startWithSAP": "1"]
        if let language = audio.language { attributes["lang"] = language }
        xml.open("AdaptationSet", attributes, order: ["id", "contentType", "mimeType", "lang", "segmentAlignment", "startWithSAP"])
        xml.element("Label", text: audio.name)
        xml.element("Role", ["schemeIdUri": "urn:mpeg:dash:role:2011", "value": "main"], order: ["schemeIdUri", "value"])
        xml.open("Representation", ["id": audio.groupID, "bandwidth": String(bandwidth(audio.track)), "codecs": CodecString.aac(audio.format),
                                    "audioSamplingRate": String(audio.format.sampleRate)],
                 order: ["id", "bandwidth", "codecs", "audioSamplingRate"])
        channelConfiguration(audio.format, into: &xml)
        segmentTemplate(audio.track, directory: audio.directory, into: &xml)
        xml.close("Representation")
        xml.close("AdaptationSet")
    }

    private static func channelConfiguration(_ format: AudioFormat, into xml: inout XMLWriter) {
        xml.element("AudioChannelConfiguration", ["schemeIdUri": "urn:mpeg:dash:23003:3:audio_channel_configuration:2011", "value": String(format.channels)],
                    order: ["schemeIdUri", "value"])
    }

    /// `SegmentTemplate` with `$Number$` file names and a `SegmentTimeline` of the exact durations, runs of equal
    /// durations folded into `r`.
    private static func segmentTemplate(_ track: MediaTrack, directory: String, into xml: inout XMLWriter) {
        xml.open("SegmentTemplate", ["timescale": String(track.timescale), "initialization": "\(directory.replacingDollars)/\(track.initialization.replacingDollars)",
                                     "media": "\(directory.replacingDollars)/\(track.naming.dashTemplate)", "startNumber": String(track.naming.firstNumber)],
                 order: ["timescale", "initialization", "media", "startNumber"])
        xml.open("SegmentTimeline", [:], order: [])
        var runs: [(duration: Int64, repeats: Int)] = []
        for segment in track.segments {
            if let last = runs.last, last.duration == segment.duration { runs[runs.count - 1].repeats += 1 } else { runs.append((segment.duration, 0)) }
        }
        for (index, run) in runs.enumerated() {
            var attributes = ["d": String(run.duration)]
            if index == 0 { attributes["t"] = String(track.startTicks) }
            if run.repeats > 0 { attributes["r"] = String(run.repeats) }
            xml.element("S", attributes, order: ["t", "d", "r"])
        }
        xml.close("SegmentTimeline")
        xml.close("SegmentTemplate")
    }

    /// `@bandwidth`: the densest single segment's rate (see `SegmentBitrate.peakOfAnySegment`).
    private static func bandwidth(_ track: MediaTrack) -> Int { SegmentBitrate.peakOfAnySegment(track.bitrateSamples, timescale: track.timescale) }

    /// `frameRate` as FrameRateType: "25" or "30000/1001", reduced.
    static func frameRate(_ rate: Rational) -> String {
        var a = Int64(rate.num), b = Int64(rate.den)
        while b != 0 { (a, b) = (b, a % b) }
        let num = Int64(rate.num) / a, den = Int64(rate.den) / a
        return den == 1 ? String(num) : "\(num)/\(den)"
    }

    /// A duration to compare across timescales.
    private struct Seconds: Comparable {
        var ticks: Int64
        var timescale: Int64
        static func < (l: Seconds, r: Seconds) -> Bool { Int128(l.ticks) * Int128(r.timescale) < Int128(r.ticks) * Int128(l.timescale) }
        static func == (l: Seconds, r: Seconds) -> Bool { Int128(l.ticks) * Int128(r.timescale) == Int128(r.ticks) * Int128(l.timescale) }
    }
}

/// Indented XML with escaped attribute values and text (XML 1.0 2.4, 3.3.3).
struct XMLWriter {
    private(set) var text = ""
    private var depth = 0

    mutating func line(_ content: String) { text += String(repeating: "  ", count: depth) + content + "\n" }

    mutating func open(_ name: String, _ attributes: [String: String], order: [String]) {
        line("<\(name)\(Self.attributes(attributes, order: order))>")
        depth += 1
    }

    mutating func close(_ name: String) {
        depth -= 1
        line("</\(name)>")
    }

    mutating func element(_ name: String, _ attributes: [String: String], order: [String]) {
        line("<\(name)\(Self.attributes(attributes, order: order))/>")
    }

    mutating func element(_ name: String, text content: String) { line("<\(name)>\(Self.escape(content))</\(name)>") }

    /// Attributes in `order` (the ones present); a name not in `order` is a programming error.
    private static func attributes(_ values: [String: String], order: [String]) -> String {
        precondition(Set(values.keys).isSubset(of: order), "attributes \(values.keys.sorted()) not all in \(order)")
        return order.compactMap { key in values[key].map { " \(key)=\"\(escape($0))\"" } }.joined()
    }

    static func escape(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }
}
