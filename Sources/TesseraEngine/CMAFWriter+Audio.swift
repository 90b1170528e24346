import TesseraCore

/// The job's audio in CMAF: its own rendition, or groups of packets muxed into the video's segments.
extension CMAFWriter {
    /// Writes the audio as its own rendition into `directory`, cut at the video's cut times (`cuts`, in the
    /// timeline's video time base on the source clock): each segment holds the AAC frames that start in its range.
    public static func writeAudio(_ audio: AudioTrack, cuts: [Int64], timeline: CMAFTimeline, to directory: String) throws(CMAFError) -> CMAFRendition {
        let parts = try split(audio, cuts: cuts, timeline: timeline)
        let sink = try FragmentSink(directory: directory, tracks: [
            .init(parameters: audio.parameters, timeBase: audio.timeBase, frameRate: nil, displayMatrix: nil),
        ])
        let trackTB = sink.timeBase(of: 0)
        let atb = audio.timeBase
        var segments: [CMAFSegment] = []
        for (index, part) in parts.enumerated() {
            guard let first = part.first, let last = part.last else {
                throw CMAFError(.badCuts, "audio segment \(index + 1)", "holds no audio (cuts closer than an AAC frame, or past the audio)")
            }
            for packet in part { try sink.write(packet, track: 0) }
            let (file, bytes, layout) = try sink.cut(index)
            let start = first.pts!, end = last.pts! + last.duration
            segments.append(CMAFSegment(
                file: file, bytes: bytes,
                startTicks: atb.rescale(start, to: trackTB), durationTicks: atb.rescale(end - start, to: trackTB),
                durationSeconds: atb.seconds(end - start),
                firstPTS: atb.rescale(part.compactMap(\.pts).min()!, to: trackTB), lastPTS: atb.rescale(part.compactMap(\.pts).max()!, to: trackTB),
                decodeTicks: Int64(layout.track(1)?.baseDecodeTime ?? 0), iFrame: nil))
        }
        try sink.finish()
        return CMAFRendition(directory: directory, content: .audio, initSegment: initName, initBytes: sink.initBytes,
                             timeBase: trackTB, segments: segments)
    }

    /// The audio's packets on the common timeline, each with its exact duration, in one group per packaging
    /// segment: a packet goes where its presentation time falls.
    static func split(_ audio: AudioTrack, cuts: [Int64], timeline: CMAFTimeline) throws(CMAFError) -> [[MediaPacket]] {
        guard let origin = timeline.audioOrigin, timeline.audioTimeBase == audio.timeBase else {
            throw CMAFError(.badTimestamps, "audio", "the timeline was made without this audio track")
        }
        let atb = audio.timeBase
        let boundaries = cuts.map { timeline.videoTimeBase.rescale($0 - timeline.videoOrigin, to: atb) }
        var parts = [[MediaPacket]](repeating: [], count: cuts.count + 1)
        var part = 0
        var lastDTS = Int64.min
        for (i, source) in audio.packets.enumerated() {
            guard let pts = source.pts ?? source.dts else { throw CMAFError(.badTimestamps, "audio packet \(i)", "has no timestamp") }
            var packet = source
            packet.pts = pts - origin
            packet.dts = (source.dts ?? pts) - origin
            guard packet.dts! >= 0, packet.dts! > lastDTS else {
                throw CMAFError(.badTimestamps, "audio packet \(i)", "decode time \(packet.dts!) is before the origin or the packet before")
            }
            lastDTS = packet.dts!
            if i + 1 < audio.packets.count, let next = audio.packets[i + 1].dts ?? audio.packets[i + 1].pts {
                packet.duration = next - origin - packet.dts!
            }
            while part < boundaries.count, packet.pts! >= boundaries[part] { part += 1 }
            parts[part].append(packet)
        }
        return parts
    }
}
