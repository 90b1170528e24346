import FFmpegKit
import Foundation
import TesseraCore

extension SegmentEncoder {
    /// A two-pass AV1 segment (`AV1FirstPass`). The first pass finds the segment's sizes either side of the CRF its share
    /// of the bits needs; the second encodes it at the CRF its allocated bitrate names in those sizes.
    static func encodeAV1(_ task: SegmentTask, pass: PassInput, cancelled: @Sendable () -> Bool,
                          progress: (Int) -> Void) throws(TesseraError) -> EncodedSegment {
        let header = task.header
        let index = header.segment.index
        let outputs = header.rungs ?? [.init(output: header.output, settings: header.settings, pass: pass)]
        var run = task
        run.header.runOut = nil
        run.header.pass = nil
        if pass.pass == 2 {
            var settings: [EncoderSettings] = []
            for rung in outputs {
                let own = rung.pass ?? pass
                let first: AV1FirstPass
                do {
                    first = try AV1FirstPass(parsing: own.stats ?? "")
                } catch {
                    throw TesseraError(.segment, segment: index, "its second pass came without its first pass's sizes (\(error))")
                }
                guard let bitrate = own.bitrate else {
                    throw TesseraError(.segment, segment: index, "its second pass came without a bitrate")
                }
                settings.append(constantQuality(rung.settings, crf: first.crf(forBitrate: bitrate)))
            }
            if run.header.rungs != nil {
                run.header.rungs = zip(outputs, settings).map { .init(output: $0.output, settings: $1) }
            }
            run.header.settings = settings[0]
            return try encodeOnce(run, cancelled: cancelled, progress: progress)
        }
        // First pass. Where the segment's share of the bits lies, from a fast preset over the whole CRF range; then
        // its sizes at the job's preset either side of that CRF, which the second pass's CRF is read from.
        let targets = outputs.map { ($0.pass ?? pass).bitrate ?? $0.settings.bitrate ?? 0 }
        let (probed, _) = try sizes(run, outputs.map { rung in
            AV1FirstPass.probes.map { crf in
                var settings = constantQuality(rung.settings, crf: crf)
                settings.preset = AV1FirstPass.probePreset(forJobPreset: rung.settings.preset)
                return settings
            }
        }, cancelled: cancelled, progress: { progress($0 / 2) })
        let anchors = zip(probed, targets).map { AV1FirstPass.anchors(around: $0.crf(forBitrate: $1)) }
        let half = header.segment.frameCount / 2
        let (measured, found) = try sizes(run, zip(outputs, anchors).map { rung, crfs in
            crfs.map { constantQuality(rung.settings, crf: $0) }
        }, cancelled: cancelled, progress: { progress(half + ($0 + 1) / 2) })
        var encoded = found
        let results = measured.map { FirstPassOutput(stats: $0.text, macroblockTree: []) }
        let headers = encoded.header.rungs ?? []
        encoded.header.firstPass = results[0]
        if header.rungs != nil {
            encoded.header.rungs = outputs.indices.map { .init(extradata: headers[2 * $0].extradata, firstPass: results[$0]) }
            encoded.header.extradata = EncodedSegment.RungHeaders.combined(encoded.header.rungs!.map(\.extradata))
        } else {
            encoded.header.rungs = nil
            encoded.header.extradata = headers.first?.extradata ?? []
        }
        encoded.packets = []
        return encoded
    }

    /// Encodes the segment once per settings, one lane each sharing the decode (`settings[r]`: output `r`'s), and
    /// returns each output's bytes at its settings' CRFs.
    private static func sizes(_ task: SegmentTask, _ settings: [[EncoderSettings]], cancelled: @Sendable () -> Bool,
                              progress: (Int) -> Void) throws(TesseraError) -> ([AV1FirstPass], EncodedSegment) {
        var run = task
        let outputs = task.header.rungs ?? [.init(output: task.header.output, settings: task.header.settings)]
        run.header.rungs = zip(outputs, settings).flatMap { rung, all in all.map { SegmentTask.RungEncoding(output: rung.output, settings: $0) } }
        let encoded = try encodeOnce(run, cancelled: cancelled, progress: progress)
        let frames = encoded.header.frameCount
        let lanes = run.header.rungs!.count
        guard frames > 0, encoded.packets.count == frames * lanes else {
            throw TesseraError(.segment, segment: task.header.segment.index,
                               "its first pass returned \(encoded.packets.count) packets for \(lanes) encodes of \(frames) frames")
        }
        var lane = 0
        var found: [AV1FirstPass] = []
        for all in settings {
            var bytes: [Int: Int] = [:]
            var seconds = 0.0
            for s in all {
                let packets = encoded.packets[lane * frames ..< (lane + 1) * frames]
                bytes[Int(s.crf ?? 0)] = packets.reduce(0) { $0 + $1.data.count }
                seconds = encoded.header.timeBase.seconds(packets.reduce(0) { $0 + $1.duration })
                lane += 1
            }
            found.append(AV1FirstPass(seconds: seconds, bytes: bytes))
        }
        return (found, encoded)
    }

    /// The settings at a constant quality `crf`, no bitrate, one pass.
    private static func constantQuality(_ settings: EncoderSettings, crf: Int) -> EncoderSettings {
        var settings = settings
        settings.crf = Double(crf)
        settings.bitrate = nil
        settings.passes = nil
        return settings
    }
}
