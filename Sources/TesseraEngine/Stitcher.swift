import FFmpegKit
import Foundation
import TesseraCore

/// Joins the encoded segments, in order, with the audio into one faststart MP4 at a temporary path, or into a
/// muxer given (an object's streamed upload, `ObjectStitch`).
public enum Stitcher {
    public struct Report: Sendable {
        public var videoPackets: Int
        public var audioPackets: Int
        public var dtsAdjusted: Int
        /// Seconds subtracted from every stream: the common origin.
        public var originSeconds: Double
    }

    /// - Parameter loadSegment: returns segment `k` (from the spool); called once per segment, in order.
    public static func stitch(plan: JobPlan, loadSegment: (Int) throws(TesseraError) -> EncodedSegment,
                              audio: AudioTrack?, to path: String) throws(TesseraError) -> Report {
        try stitch(plan: plan, loadSegment: loadSegment, audio: audio, name: path, header: [("movflags", "+faststart")]) { () throws(FFmpegError) in
            try MediaOutput(path: path)
        }
    }

    /// - Parameters:
    ///   - name: the output as errors name it.
    ///   - header: the muxer's options.
    ///   - makeOutput: the muxer, made once the first segment is loaded.
    public static func stitch(plan: JobPlan, loadSegment: (Int) throws(TesseraError) -> EncodedSegment, audio: AudioTrack?,
                              name path: String, header: [(String, String)],
                              makeOutput: () throws(FFmpegError) -> MediaOutput) throws(TesseraError) -> Report {
        let count = plan.cuts.segments.count
        let first = try loadSegment(0)
        let reference = first.header.extradata
        guard !reference.isEmpty else { throw TesseraError(.stitch, segment: 0, "encoder returned no SPS/PPS") }

        let videoTB = plan.output.timeBase
        let firstPTS = plan.outputSpan.lowerBound
        let videoStart = videoTB.seconds(firstPTS)
        let origin = min(videoStart, audio?.startSeconds ?? videoStart)
        // Exact where the video is the origin; otherwise the audio's start converted once, exactly.
        let videoOrigin: Int64
        var audioOrigin: Int64 = 0
        if let audio, audio.startSeconds < videoStart {
            audioOrigin = audio.startTicks
            videoOrigin = audio.timeBase.rescale(audio.startTicks, to: videoTB)
        } else {
            videoOrigin = firstPTS
            if let audio { audioOrigin = videoTB.rescale(firstPTS, to: audio.timeBase) }
        }

        let params = plan.videoParameters(extradata: reference)

        var report = Report(videoPackets: 0, audioPackets: 0, dtsAdjusted: 0, originSeconds: origin)
        do {
            let output = try makeOutput()
            let videoStream = try output.addStream(parameters: params, timeBase: videoTB, frameRate: plan.output.frameRate)
            // Only with --rotate none: the pixels keep the source's orientation and the matrix tells players to turn them.
            if let matrix = plan.output.displayMatrix {
                try output.setDisplayMatrix(matrix, stream: videoStream)
            }
            var audioStream = -1
            if let audio { audioStream = try output.addStream(parameters: audio.parameters, timeBase: audio.timeBase, frameRate: nil) }
            try output.writeHeader(options: header)

            var audioNext = 0
            func writeAudio(upTo seconds: Double) throws(FFmpegError) {
                guard let audio else { return }
                while audioNext < audio.packets.count {
                    var media = audio.packets[audioNext]
                    let dts = (media.dts ?? media.pts ?? 0) - audioOrigin
                    guard audio.timeBase.seconds(dts) <= seconds else { return }
                    media.pts = media.pts.map { $0 - audioOrigin }
                    media.dts = dts
                    let p = try Packet(media)
                    try output.write(p, stream: audioStream, timeBase: audio.timeBase)
                    audioNext += 1
                    report.audioPackets += 1
                }
            }

            var lastDTS = Int64.min
            for k in 0..<count {
                let segment = try (k == 0 ? first : loadSegment(k)).checked(k, plan: plan, reference: reference)
                for var media in segment.packets {
                    guard let pts = media.pts else { throw TesseraError(.stitch, segment: k, "packet without pts") }
                    media.pts = pts - videoOrigin
                    var dts = (media.dts ?? pts) - videoOrigin
                    // x264 derives each segment's first dts from its own B-frame delay; keep dts rising across joins.
                    if dts <= lastDTS {
                        dts = lastDTS + 1
                        report.dtsAdjusted += 1
                    }
                    guard dts <= media.pts! else {
                        throw TesseraError(.stitch, segment: k, "cannot order decode timestamps at the join (dts \(dts) > pts \(media.pts!))")
                    }
                    media.dts = dts
                    lastDTS = dts
                    try writeAudio(upTo: videoTB.seconds(dts))
                    let p = try Packet(media)
                    try output.write(p, stream: videoStream, timeBase: videoTB)
                    report.videoPackets += 1
                }
            }
            try writeAudio(upTo: .infinity)
            try output.finish()
        } catch let error as TesseraError {
            throw error
        } catch {
            throw TesseraError(.stitch, path, "muxing failed (\(error))")
        }
        return report
    }
}
