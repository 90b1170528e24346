import FFmpegKit
import Foundation
import TesseraCore

/// The worker's core: decodes one segment payload, keeps exactly the frames in its pts range, and
/// encodes them with libx264 from the job's frozen settings, showing it the run-out frames past the
/// range's end without keeping them. Runs on the calling thread; blocking.
public enum SegmentEncoder {
    /// libx264 configuration from the frozen settings. Identical for every segment of a job.
    /// `pass` and `statsPath`: a two-pass job's pass, and where libx264 writes or reads its statistics.
    public static func encoderConfig(_ output: VideoOutputFormat, _ settings: EncoderSettings,
                                     pass: PassInput? = nil, statsPath: String? = nil, sceneCuts: Bool? = nil,
                                     rung: Bool = false, repeatable: Bool = false) -> VideoEncoderConfig {
        switch settings.videoCodec {
        case .h264: break
        case .hevc: return hevcConfig(output, settings, pass: pass, statsPath: statsPath, sceneCuts: sceneCuts, rung: rung)
        case .av1: return av1Config(output, settings, pass: pass)
        }
        var config = VideoEncoderConfig(codecName: "libx264", format: output, gopSize: Int32(settings.keyint),
                                        maxBFrames: Int32(settings.effectiveBFrames))
        config.threads = Int32(settings.threads)
        if let level = settings.level, let idc = H264Level.named(level)?.idc { config.level = Int32(idc) }
        var options: [(String, String)] = [("preset", settings.preset), ("profile", settings.profile)]
        setRateControl(&config, &options, settings, pass: pass)
        // Closed GOP and a pinned pic_init_qp, so that every segment's PPS is the same.
        var params = "open-gop=0:stitchable=1"
        // A segment starting at an extra cut makes no IDR of its own (`JobPlan.sceneCuts(of:)`).
        if sceneCuts == false { params += ":scenecut=0" }
        // libx264's lookahead thread decides a segment's last frame types by how far it got when the encoder was
        // flushed, so with threads its bytes do not repeat; in the encoding thread they do, at some speed
        // (docs/security.md). Only audited jobs ask for it.
        if repeatable, settings.threads > 1 { params += ":sync-lookahead=0" }
        // A frame asked to be intra (a segment's first after its lead-in) is an IDR.
        options.append(("forced-idr", "1"))
        // Each segment starts its own VBV buffer. x264 assumes it 90% full, so every join could spend
        // most of a buffer on top of the cap: capped CRF at 250k/500k came out at 317k on 4 s segments.
        // Starting half full keeps a cap a cap (250k); true CBR keeps x264's default, which lands nearer
        // its target (+7% against -21% half full).
        // A ladder's rung keeps x264's own 90%, as one ffmpeg process making the ladder starts: its segments are whole
        // packaging segments, whose peak rate the playlists measure, and its caps are tight enough (365k at 360p) that
        // half full cost 0.9 dB there, 7% under the whole-file encode's bits.
        if let maxrate = settings.maxrate, maxrate > (settings.bitrate ?? 0), !rung { params += ":vbv-init=0.5" }
        // A segment's second pass is seconds long, where x264's default tolerance (a second of bits) would leave
        // its prediction errors uncorrected: it compensates over a fifth of that.
        if pass?.pass == 2, statsPath != nil { params += ":ratetol=0.2" }
        options.append(("x264-params", params))
        if let pass, let statsPath {
            config.pass = pass.pass
            options.append(("stats", statsPath))
        }
        config.options = options
        return config
    }

    /// The SPS/PPS every segment of a job must carry: what libx264 writes at open for the frozen
    /// settings (no frame is encoded).
    public static func headers(_ output: VideoOutputFormat, _ settings: EncoderSettings) throws(TesseraError) -> [UInt8] {
        do {
            return try Encoder(video: encoderConfig(output, settings)).extradata
        } catch {
            throw TesseraError(.settings, "encoder", "\(settings.videoCodec.encoderName) refused the job's settings (\(error))")
        }
    }

    /// Encodes the segment; `progress` is told the source frames given to the encoder so far, as they go.
    /// A two-pass job's first pass returns libx264's statistics instead of packets, a ladder's one per rung.
    public static func encode(_ task: SegmentTask, cancelled: @Sendable () -> Bool = { false },
                              progress: (Int) -> Void = { _ in }) throws(TesseraError) -> EncodedSegment {
        guard let pass = task.header.pass else { return try encodeOnce(task, cancelled: cancelled, progress: progress) }
        if task.header.settings.videoCodec == .av1 { return try encodeAV1(task, pass: pass, cancelled: cancelled, progress: progress) }
        let index = task.header.segment.index
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-pass-\(UUID().uuidString)").path
        // Each output's own statistics file: a ladder's rungs are encoded with their own passes.
        let passes = task.header.rungs?.map { $0.pass ?? pass } ?? [pass]
        let statsPaths = passes.indices.map { folder + "/stats-\($0)" }
        // The macroblock tree beside the statistics: x264's `.mbtree`, x265's `.cutree`.
        let tree = task.header.settings.videoCodec == .hevc ? ".cutree" : ".mbtree"
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for (rungPass, stats) in zip(passes, statsPaths) where rungPass.pass == 2 {
                try Data((rungPass.stats ?? "").utf8).write(to: URL(fileURLWithPath: stats))
                if !rungPass.macroblockTree.isEmpty {
                    try Data(rungPass.macroblockTree).write(to: URL(fileURLWithPath: stats + tree))
                }
            }
        } catch {
            throw TesseraError(.segment, segment: index, "cannot write first-pass statistics (\(error))")
        }
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The encoders are closed when encodeOnce returns: libx264 writes its statistics files then.
        var encoded = try encodeOnce(task, passes: Array(zip(passes, statsPaths)), cancelled: cancelled, progress: progress)
        guard pass.pass == 1 else { return encoded }
        var outputs: [FirstPassOutput] = []
        for stats in statsPaths {
            guard let text = FileManager.default.contents(atPath: stats) else {
                throw TesseraError(.segment, segment: index, "\(task.header.settings.videoCodec.encoderName) wrote no first-pass statistics")
            }
            let treeBytes = FileManager.default.contents(atPath: stats + tree).map { [UInt8]($0) } ?? []
            outputs.append(FirstPassOutput(stats: String(decoding: text, as: UTF8.self), macroblockTree: treeBytes))
        }
        encoded.header.firstPass = outputs[0]
        if let rungs = encoded.header.rungs {
            encoded.header.rungs = zip(rungs, outputs).map { .init(extradata: $0.extradata, firstPass: $1) }
        }
        encoded.packets = []
        return encoded
    }

    /// `passes`: each output's pass and its statistics file, in two passes.
    static func encodeOnce(_ task: SegmentTask, passes: [(PassInput, String)]? = nil, cancelled: @Sendable () -> Bool,
                           progress: (Int) -> Void) throws(TesseraError) -> EncodedSegment {
        let header = task.header
        let segment = header.segment
        let started = Date()
        do {
            let output = header.output
            let decoder = try Decoder(parameters: header.codec, timeBase: header.timeBase)
            _ = FFmpeg.deterministicAllocations   // before libx264 allocates anything
            let ticks = output.outputTicks(start: segment.startPTS, end: segment.endPTS, sourceTimeBase: header.timeBase)
            let resamples = output.resamplesFrameRate == true
            // Frames past the end shown to the encoder only (not when resampling: there it sees ticks).
            // Nor in two passes: libx264's second pass takes exactly the first pass's frames.
            let runOut = resamples || passes != nil ? nil : header.runOut
            // One lane per output: a ladder's rungs share the decode, each scales and encodes on its own.
            let outputs = header.rungs ?? [.init(output: output, settings: header.settings)]
            var lanes: [EncoderLane] = []
            for (r, rung) in outputs.enumerated() {
                let pass = passes?[r]
                lanes.append(try EncoderLane(rung.output, config: encoderConfig(rung.output, rung.settings, pass: pass?.0, statsPath: pass?.1,
                                                                                 sceneCuts: header.sceneCuts, rung: header.rungs != nil,
                                                                                 repeatable: header.repeatable == true),
                                             ticks: ticks, leadIn: header.leadIn ?? 0, forced: Set(header.forcedKeyframes ?? []),
                                             stopsAtLastKept: runOut != nil, segment: segment.index, sourceTimeBase: header.timeBase))
            }
            let frame = Frame()
            var kept = 0, decoded = 0
            var lastPTS = Int64.min

            func drainDecoder() throws {
                do {
                    while try decoder.receive(frame) == .ready {
                        decoded += 1
                        defer { frame.unref() }
                        guard let pts = frame.pts, pts >= segment.startPTS else { continue }
                        if pts >= segment.endPTS {
                            guard let runOut, pts < runOut.endPTS else { continue }
                            for lane in lanes { try lane.showRunOut(frame, pts: pts) }
                            continue
                        }
                        guard pts > lastPTS else {
                            throw TesseraError(.segment, segment: segment.index, "decoder returned pts \(pts) after \(lastPTS)")
                        }
                        lastPTS = pts
                        kept += 1
                        progress(kept)
                        // The last kept frame ends its mini-GOP, so nothing kept refers to a run-out frame.
                        let endsGOP = runOut != nil && kept == segment.frameCount
                        for lane in lanes { try lane.keep(frame, pts: pts, endsGOP: endsGOP, resamples: resamples) }
                    }
                } catch let error as TesseraError {
                    throw error
                } catch {
                    throw TesseraError(.segment, segment: segment.index, "\(error)")
                }
            }

            for lane in lanes { try lane.sendLeadIn() }
            for media in task.packets {
                if cancelled() { throw TesseraError.canceled }
                let packet = try Packet(media)
                while try decoder.send(packet) == .needsInput { try drainDecoder() }
                try drainDecoder()
            }
            _ = try decoder.send(nil)
            try drainDecoder()
            // Flush: the delayed frames come out only now.
            for lane in lanes { try lane.finish(resamples: resamples, until: segment.endPTS) }

            guard kept == segment.frameCount else {
                throw TesseraError(.segment, segment: segment.index, "decoded \(kept) frames in its range, the plan has \(segment.frameCount) (source damaged?)")
            }
            for lane in lanes {
                if resamples, lane.sent != ticks.count {
                    throw TesseraError(.segment, segment: segment.index, "sent \(lane.sent) frames for the \(ticks.count) ticks of its span")
                }
                guard lane.out.count == lane.sent else {
                    throw TesseraError(.segment, segment: segment.index, "encoder returned \(lane.out.count) packets for \(lane.sent) frames")
                }
                assignDurations(&lane.out, endPTS: ticks.upperBound)
            }
            let seconds = Date().timeIntervalSince(started)
            guard header.rungs != nil else {
                return EncodedSegment(jobID: header.jobID, index: segment.index, timeBase: output.timeBase,
                                      extradata: lanes[0].extradata, frameCount: lanes[0].sent, decodedFrames: decoded,
                                      encodeSeconds: seconds, packets: lanes[0].out)
            }
            guard lanes.allSatisfy({ $0.sent == lanes[0].sent }) else {
                throw TesseraError(.segment, segment: segment.index, "rungs were given \(lanes.map(\.sent)) frames")
            }
            let headers = lanes.map(\.extradata)
            return EncodedSegment(jobID: header.jobID, index: segment.index, timeBase: output.timeBase,
                                  extradata: EncodedSegment.RungHeaders.combined(headers), frameCount: lanes[0].sent,
                                  decodedFrames: decoded, encodeSeconds: seconds,
                                  rungs: headers.map { EncodedSegment.RungHeaders(extradata: $0) }, packets: lanes.flatMap(\.out))
        } catch let error as TesseraError {
            throw error
        } catch {
            throw TesseraError(.segment, segment: segment.index, "\(error)")
        }
    }

    /// Each packet lasts until the next one in display order; the last one until the segment's end.
    static func assignDurations(_ packets: inout [MediaPacket], endPTS: Int64) {
        let order = packets.indices.sorted { (packets[$0].pts ?? 0) < (packets[$1].pts ?? 0) }
        for (n, i) in order.enumerated() {
            let next = n + 1 < order.count ? packets[order[n + 1]].pts ?? endPTS : endPTS
            packets[i].duration = max(1, next - (packets[i].pts ?? next))
        }
    }
}
