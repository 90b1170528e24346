import FFmpegKit
import Foundation
import TesseraCore

/// Reopens a ladder job's outputs with libavformat before the job may report success: every rung frame-exact
/// against its plan, an IDR (for AV1 a key frame with its sequence header) in every rung at the first frame and at every packaging cut, every playlist and the
/// MPD readable, and audio as long as the source's.
public enum LadderVerifier {
    /// What libavformat read of one stream.
    public struct StreamSummary: Sendable {
        public var info: StreamInfo
        public var frames = 0
        /// Presentation times of the IDR frames, in seconds from the stream's first frame, rising.
        public var idrSeconds: [Double] = []
        public var startSeconds = Double.infinity
        public var endSeconds = -Double.infinity
        public var durationSeconds: Double { frames == 0 ? 0 : endSeconds - startSeconds }
    }

    public struct Report: Sendable {
        /// Per rung, in the ladder's order: what its media playlist (or its file) held.
        public var rungs: [StreamSummary]
        /// Every playlist and manifest read back, with the streams libavformat found in it.
        public var manifests: [String: Int]
    }

    /// Checks the streaming folder at `folder` as `LadderPackager` wrote it for `destination`.
    public static func verifyStreaming(folder: String, destination: LadderOutput, plan: JobPlan, audio: AudioTrack?) throws(TesseraError) -> Report {
        guard let ladder = plan.ladder else { throw TesseraError(.verification, folder, "the job has no ladder") }
        let muxed = ladder.spec.audioPerRung && audio != nil
        var rungs: [StreamSummary] = []
        var manifests: [String: Int] = [:]
        for (r, name) in ladder.names.enumerated() {
            let rungFolder = folder + "/" + name
            let path = rungFolder + "/" + HLSPlaylist.mediaPlaylistName
            // DASH alone writes no media playlist: the rung's segments are read joined behind their init segment.
            let streams = try destination.packaging.writesHLS ? read(path) : read(joining: rungFolder, label: "\(destination.output) rung \(name)")
            let label = destination.packaging.writesHLS ? path : rungFolder
            rungs.append(try check(streams, rung: r, name: name, plan: plan, audio: audio, muxedAudio: muxed, label: label))
            if destination.packaging.writesHLS { manifests[path] = streams.count }
        }
        try checkAlignment(rungs, names: ladder.names, plan: plan, label: destination.output)
        if let audio, !muxed {
            let path = folder + "/" + LadderPackager.audioFolder + "/" + HLSPlaylist.mediaPlaylistName
            let streams = try destination.packaging.writesHLS ? read(path)
                : read(joining: folder + "/" + LadderPackager.audioFolder, label: "\(destination.output) audio")
            guard streams.count == 1, let only = streams.first, only.info.kind == .audio else {
                throw TesseraError(.verification, path, "holds \(streams.count) streams, not one AAC stream")
            }
            try checkAudio(only, audio, label: path)
        }
        // The master playlist and the MPD list every rung (and the audio), each with all its frames. libavformat 5.1's
        // DASH demuxer mixes up the packets of a Representation that holds two streams, so an MPD of rungs with their
        // audio muxed in is only opened and its video counted; each such rung was read above as a client appends it.
        for name in [destination.masterName, destination.manifestName].compactMap({ $0 }) {
            let path = folder + "/" + name
            let streams = try name == destination.manifestName && !muxed ? readEach(path) : read(path)
            if muxed, name == destination.manifestName {
                let video = streams.filter { $0.info.kind == .video }.count
                guard video == ladder.rungs.count else {
                    throw TesseraError(.verification, path, "lists \(video) video representations, the ladder has \(ladder.rungs.count) rungs")
                }
                manifests[path] = streams.count
                continue
            }
            let video = streams.filter { $0.info.kind == .video }
            let frames = (0..<ladder.rungs.count).map { plan.forRung($0).outputFrameCount }
            guard video.map(\.frames).sorted() == frames.sorted() else {
                throw TesseraError(.verification, path, "lists video of \(video.map(\.frames)) frames, the rungs have \(frames)")
            }
            if audio != nil, !streams.contains(where: { $0.info.kind == .audio }) { throw TesseraError(.verification, path, "lists no audio") }
            manifests[path] = streams.count
        }
        return Report(rungs: rungs, manifests: manifests)
    }

    /// Checks one faststart MP4 per rung, in rung order: each as a single output is checked, and their IDRs aligned.
    public static func verifyFiles(_ paths: [String], plan: JobPlan, audio: AudioTrack?) throws(TesseraError) -> Report {
        guard let ladder = plan.ladder, paths.count == ladder.rungs.count else {
            throw TesseraError(.verification, paths.first ?? "", "\(paths.count) files for the ladder's rungs")
        }
        var rungs: [StreamSummary] = []
        for (r, path) in paths.enumerated() {
            _ = try Verifier.verify(path, Verifier.expectation(for: plan.forRung(r), audio: audio))
            rungs.append(try check(try read(path), rung: r, name: ladder.names[r], plan: plan, audio: audio, muxedAudio: audio != nil, label: path))
        }
        try checkAlignment(rungs, names: ladder.names, plan: plan, label: paths[0])
        return Report(rungs: rungs, manifests: [:])
    }

    /// The rung's video: its size, every frame of the plan, its duration, and its AAC when it carries it.
    static func check(_ streams: [StreamSummary], rung r: Int, name: String, plan: JobPlan, audio: AudioTrack?, muxedAudio: Bool,
                      label: String) throws(TesseraError) -> StreamSummary {
        func fail(_ problem: String) -> TesseraError { TesseraError(.verification, label, problem) }
        let rungPlan = plan.forRung(r)
        let expected = Verifier.expectation(for: rungPlan, audio: audio)
        let codec = rungPlan.settings.videoCodec
        guard let video = streams.first(where: { $0.info.kind == .video }), video.info.codecName == codec.rawValue else {
            throw fail("no \(codec.displayName) video stream")
        }
        if codec == .hevc, video.info.parameters.codecTag != CodecParameters.tag("hvc1") { throw fail("HEVC is not tagged hvc1") }
        guard video.info.width == expected.width, video.info.height == expected.height else {
            throw fail("video is \(video.info.width)x\(video.info.height), the plan has \(expected.width)x\(expected.height) for \(name)")
        }
        guard video.frames == expected.frameCount else { throw fail("has \(video.frames) video frames, the plan has \(expected.frameCount)") }
        guard abs(video.durationSeconds - expected.videoDurationSeconds) <= max(0.002, expected.frameSeconds * 0.5) else {
            throw fail("video lasts \(video.durationSeconds.rounded3) s, the source \(expected.videoDurationSeconds.rounded3) s")
        }
        let audioStreams = streams.filter { $0.info.kind == .audio }
        if muxedAudio, let audio {
            guard audioStreams.count == 1 else { throw fail("holds \(audioStreams.count) audio streams, not the job's one") }
            try checkAudio(audioStreams[0], audio, label: label)
        } else if !audioStreams.isEmpty {
            throw fail("has an audio stream the plan did not put there")
        }
        return video
    }

    /// The AAC lasts as the source's audio, give or take the priming and padding CMAF keeps (no edit list).
    static func checkAudio(_ stream: StreamSummary, _ audio: AudioTrack, label: String) throws(TesseraError) {
        guard stream.info.codecName == "aac" else { throw TesseraError(.verification, label, "audio is \(stream.info.codecName), not AAC") }
        guard abs(stream.durationSeconds - audio.sourceDurationSeconds) <= 0.05 + 2 * audio.frameSeconds else {
            throw TesseraError(.verification, label, "audio lasts \(stream.durationSeconds.rounded3) s, the source \(audio.sourceDurationSeconds.rounded3) s")
        }
    }

    /// Every rung has an IDR at its first frame and at every packaging cut, at the same instants.
    static func checkAlignment(_ rungs: [StreamSummary], names: [String], plan: JobPlan, label: String) throws(TesseraError) {
        let tb = plan.output.timeBase
        let first = plan.outputSpan.lowerBound
        let cuts = [0.0] + plan.packagingCutTicks.map { tb.seconds($0 - first) }
        let tolerance = plan.outputDurationSeconds / Double(max(1, plan.outputFrameCount)) / 4
        for (r, rung) in rungs.enumerated() {
            for cut in cuts where !rung.idrSeconds.contains(where: { abs($0 - cut) <= tolerance }) {
                throw TesseraError(.verification, label, "rung \(names[r]) has no IDR at \(cut.rounded3) s, where every rung starts a segment")
            }
        }
    }

    /// Every stream of `path`, each read on its own (the others discarded): libavformat 5.1's DASH demuxer, reading
    /// several Representations at once, ends them all when the first ends, a frame or two short of the others.
    public static func readEach(_ path: String) throws(TesseraError) -> [StreamSummary] {
        var summaries = try read(path, only: 0)
        for stream in summaries.indices.dropFirst() { summaries[stream] = try read(path, only: stream)[stream] }
        return summaries
    }

    static func open(_ path: String) throws(TesseraError) -> MediaInput {
        do { return try MediaInput(path: path) } catch {
            throw TesseraError(.verification, path, "libavformat cannot open it (\(error.message))")
        }
    }

    /// Reads every packet of `path` (of stream `only`, when given) and sums up each stream.
    public static func read(_ path: String, only: Int? = nil) throws(TesseraError) -> [StreamSummary] {
        let input = try open(path)
        if let only { input.readOnly(stream: only) }
        var summaries = input.streams.map { StreamSummary(info: $0) }
        let classifiers = input.streams.map {
            RandomAccessClassifier(codecName: $0.codecName, intraOnly: $0.intraOnly, extradata: $0.parameters.extradata, av1KeyFrames: true)
        }
        var idrTimes = [[Double]](repeating: [], count: summaries.count)
        let packet = Packet()
        do {
            while try input.read(into: packet) {
                let s = packet.streamIndex
                guard summaries.indices.contains(s) else { continue }
                let tb = summaries[s].info.timeBase
                summaries[s].frames += 1
                guard let pts = packet.pts else { continue }
                summaries[s].startSeconds = min(summaries[s].startSeconds, tb.seconds(pts))
                // A last sample may come without a duration: it lasts a frame (the stream's frame rate, or an AAC frame).
                let duration = packet.duration > 0 ? tb.seconds(packet.duration) : nominalFrameSeconds(summaries[s].info)
                summaries[s].endSeconds = max(summaries[s].endSeconds, tb.seconds(pts) + duration)
                if summaries[s].info.kind == .video {
                    let media = packet.mediaPacket
                    if media.data.withUnsafeBytes({ classifiers[s].classify($0, keyFlag: media.isKey) }) == .idr { idrTimes[s].append(tb.seconds(pts)) }
                }
            }
        } catch {
            throw TesseraError(.verification, path, "read error (\(error.message))")
        }
        for s in summaries.indices {
            summaries[s].idrSeconds = idrTimes[s].map { $0 - summaries[s].startSeconds }.sorted()
        }
        return summaries
    }

    /// One frame's length as the stream declares it: its average frame rate, or its audio frame size.
    static func nominalFrameSeconds(_ info: StreamInfo) -> Double {
        if info.kind == .video { return info.averageFrameRate.isValid ? 1 / info.averageFrameRate.doubleValue : 0 }
        return info.sampleRate > 0 ? Double(info.parameters.frameSize > 0 ? info.parameters.frameSize : 1024) / Double(info.sampleRate) : 0
    }

    /// Reads a CMAF rendition's init segment and media segments joined into one file (what a DASH client appends).
    static func read(joining folder: String, label: String) throws(TesseraError) -> [StreamSummary] {
        let joined = OutputPath.hiddenSibling(of: folder, tag: "check") + ".mp4"
        defer { try? FileManager.default.removeItem(atPath: joined) }
        do {
            let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".m4s") }.sorted()
            FileManager.default.createFile(atPath: joined, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: joined))
            defer { try? handle.close() }
            for name in [CMAFWriter.initName] + names {
                try handle.write(contentsOf: Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
            }
        } catch {
            throw TesseraError(.verification, label, "cannot read its segments (\(error.localizedDescription))")
        }
        return try read(joined)
    }
}

extension LadderOutput {
    /// Verifies what `LadderPackager.package` wrote to the temporaries, before `commit()`.
    @discardableResult
    public func verify(plan: JobPlan, audio: AudioTrack?) throws(TesseraError) -> LadderVerifier.Report {
        guard packaging.isStreaming else { return try LadderVerifier.verifyFiles(temporaries, plan: plan, audio: audio) }
        return try LadderVerifier.verifyStreaming(folder: temporaryFolder, destination: self, plan: plan, audio: audio)
    }
}
