import FFmpegKit
import Foundation
import TesseraCore

/// Writes one rung's encoded segments (and the job's AAC, muxed in or as its own rendition) as CMAF: an
/// `init.mp4` and one `segment_NNNNN.m4s` per packaging segment, cut at given times that must fall on IDRs.
///
/// Design: one mp4 muxer per rendition, writing into memory with `frag_custom`. Its header (ftyp and an empty
/// moov) is the init segment; each packaging segment's packets are written and flushed as one fragment
/// (moof + mdat), whose bytes become one file. One muxer for all segments keeps a single sample entry (`avc1`,
/// SPS/PPS in avcC) and a continuous `tfdt`, which a muxer per segment would have to re-create and re-seed.
/// `frag_discont` makes the first fragment's `tfdt` the first packet's decode time (the common timeline), not 0;
/// no edit list is written (`use_editlist=0`: CMAF has none). libavformat 5.1's `cmaf` flag is left out: with it
/// the first `tfdt` became the first pts, moving B-frame video one decode delay later than its audio.
/// `avoid_negative_ts=disabled` keeps libavformat from shifting a rendition on its own. Every sample's duration
/// is the next sample's decode time minus its own, so segments join exactly.
public enum CMAFWriter {
    public static let movflags = "+frag_custom+empty_moov+default_base_moof+frag_discont+skip_trailer"
    public static let initName = "init.mp4"

    /// The rung's video stream: codec parameters around the encoder's SPS/PPS (`JobPlan.videoParameters`).
    public struct Video: Sendable {
        public var parameters: CodecParameters
        public var timeBase: Rational
        public var frameRate: Rational?
        public var displayMatrix: [Int32]?

        public init(parameters: CodecParameters, timeBase: Rational, frameRate: Rational?, displayMatrix: [Int32]? = nil) {
            self.parameters = parameters
            self.timeBase = timeBase
            self.frameRate = frameRate
            self.displayMatrix = displayMatrix
        }

        /// The plan's output stream with the encoder's headers (from the first encoded segment).
        public init(plan: JobPlan, extradata: [UInt8]) {
            self.init(parameters: plan.videoParameters(extradata: extradata), timeBase: plan.output.timeBase,
                      frameRate: plan.output.frameRate, displayMatrix: plan.output.displayMatrix)
        }
    }

    public static func segmentName(_ index: Int) -> String { String(format: "segment_%05d.m4s", index + 1) }

    /// Writes the video of `segmentCount` encoded segments (loaded in order) into `directory`, cut before each
    /// of `cuts` (presentation times in `video.timeBase`, on the encoded packets' clock, rising). With
    /// `muxedAudio`, each media segment also carries the audio whose presentation falls in its time range.
    public static func writeVideo(_ video: Video, segmentCount: Int, loadSegment: (Int) throws(TesseraError) -> EncodedSegment,
                                  cuts: [Int64], timeline: CMAFTimeline, muxedAudio: AudioTrack? = nil,
                                  to directory: String) throws(CMAFError) -> CMAFRendition {
        guard !video.parameters.extradata.isEmpty else {
            throw CMAFError(.segmentMismatch, directory, "the video has no SPS/PPS for its sample entry")
        }
        guard segmentCount > 0 else { throw CMAFError(.badCuts, directory, "no encoded segments to package") }
        guard zip(cuts, cuts.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw CMAFError(.badCuts, "cut times", "do not rise strictly: \(cuts)")
        }
        let tb = video.timeBase
        let classifier = RandomAccessClassifier(codecName: video.parameters.codecName, intraOnly: false,
                                                extradata: video.parameters.extradata, av1KeyFrames: true)
        let audioParts = try muxedAudio.map { audio throws(CMAFError) in try split(audio, cuts: cuts, timeline: timeline) }

        let sink = try FragmentSink(directory: directory, tracks: [
            .init(parameters: video.parameters, timeBase: tb, frameRate: video.frameRate, displayMatrix: video.displayMatrix),
        ] + (muxedAudio.map { [.init(parameters: $0.parameters, timeBase: $0.timeBase, frameRate: nil, displayMatrix: nil)] } ?? []))
        let trackTB = sink.timeBase(of: 0)

        var segments: [CMAFSegment] = []
        var current = SegmentSpan()  // the packaging segment being filled, on the source clock
        var pending: MediaPacket?    // the last packet, written once the next one gives its duration
        var lastDTS = Int64.min
        var lastDelta: Int64 = 0
        var nextCut = 0

        func writePending(nextDTS: Int64?, ownDuration: Int64) throws(CMAFError) {
            guard var packet = pending else { return }
            let delta = nextDTS.map { $0 - packet.dts! } ?? (ownDuration > 0 ? ownDuration : lastDelta)
            packet.duration = delta
            lastDelta = delta
            try sink.write(packet, track: 0)
            pending = nil
        }

        func closeSegment(end: Int64) throws(CMAFError) {
            let index = segments.count
            if let audioParts, index < audioParts.count {
                for packet in audioParts[index] { try sink.write(packet, track: 1) }
            }
            let (file, bytes, layout) = try sink.cut(index)
            guard let track = layout.track(1), track.firstSampleIsSync == true else {
                throw CMAFError(.malformedSegment, file, "does not start with a sync sample")
            }
            let start = current.start - timeline.videoOrigin
            let span = end - current.start
            segments.append(CMAFSegment(
                file: file, bytes: bytes,
                startTicks: tb.rescale(start, to: trackTB), durationTicks: tb.rescale(span, to: trackTB),
                durationSeconds: tb.seconds(span),
                firstPTS: tb.rescale(current.minPTS - timeline.videoOrigin, to: trackTB),
                lastPTS: tb.rescale(current.maxPTS - timeline.videoOrigin, to: trackTB),
                decodeTicks: Int64(track.baseDecodeTime ?? 0),
                iFrame: ByteRange(offset: Int64(layout.moofOffset),
                                  length: Int64(track.firstSampleOffset + track.firstSampleSize - layout.moofOffset))))
            current = SegmentSpan()
        }

        let reference = video.parameters.extradata
        for k in 0..<segmentCount {
            let segment: EncodedSegment
            do { segment = try loadSegment(k) } catch { throw CMAFError(.segmentMismatch, error.subject, error.problem) }
            guard segment.header.index == k else {
                throw CMAFError(.segmentMismatch, "segment \(k)", "segment \(segment.header.index) is in its place")
            }
            guard segment.header.extradata == reference else {
                throw CMAFError(.segmentMismatch, "segment \(k)", "SPS/PPS differ from the stream's")
            }
            for media in segment.packets {
                guard let pts = media.pts else { throw CMAFError(.badTimestamps, "segment \(k)", "packet without pts") }
                let isIDR = media.data.withUnsafeBytes { classifier.classify($0, keyFlag: media.isKey) } == .idr
                if current.isEmpty && segments.isEmpty, !isIDR {
                    throw CMAFError(.cutNotOnIDR, "segment \(k)", "the first frame (pts \(pts)) is not an IDR")
                }
                if nextCut < cuts.count, pts >= cuts[nextCut] {
                    guard pts == cuts[nextCut], isIDR else {
                        let found = pts == cuts[nextCut] ? "the frame there is not an IDR" : "no frame starts there (next: pts \(pts))"
                        throw CMAFError(.cutNotOnIDR, "cut at \(cuts[nextCut])", "is not on an IDR at \(tb.seconds(cuts[nextCut])) s: \(found)")
                    }
                    guard !current.isEmpty else { throw CMAFError(.badCuts, "cut at \(pts)", "is at the start of the video") }
                    try writePending(nextDTS: shiftedDTS(media, pts, timeline, lastDTS), ownDuration: 0)
                    try closeSegment(end: pts)
                    nextCut += 1
                }
                guard current.isEmpty || pts >= current.start else {
                    throw CMAFError(.cutNotOnIDR, "cut at \(current.start)", "frame at pts \(pts) shows before the IDR it follows (open GOP)")
                }
                let dts = shiftedDTS(media, pts, timeline, lastDTS)
                guard dts >= 0 else { throw CMAFError(.badTimestamps, "segment \(k)", "decode time \(dts) is before the timeline's origin") }
                guard dts <= pts - timeline.videoOrigin else {
                    throw CMAFError(.badTimestamps, "segment \(k)", "cannot order decode timestamps (dts \(dts) > pts \(pts - timeline.videoOrigin))")
                }
                try writePending(nextDTS: dts, ownDuration: 0)
                lastDTS = dts
                pending = MediaPacket(pts: pts - timeline.videoOrigin, dts: dts, duration: media.duration, flags: media.flags, data: media.data)
                current.add(pts: pts, end: pts + (media.duration > 0 ? media.duration : lastDelta), isFirst: current.isEmpty)
            }
        }
        guard nextCut == cuts.count else {
            throw CMAFError(.badCuts, "cut at \(cuts[nextCut])", "lies past the end of the video")
        }
        try writePending(nextDTS: nil, ownDuration: pending?.duration ?? 0)
        try closeSegment(end: current.end)
        try sink.finish()
        return CMAFRendition(directory: directory, content: muxedAudio == nil ? .video : .videoAndAudio, initSegment: initName,
                             initBytes: sink.initBytes, timeBase: trackTB, segments: segments)
    }

    static func shiftedDTS(_ media: MediaPacket, _ pts: Int64, _ timeline: CMAFTimeline, _ lastDTS: Int64) -> Int64 {
        // Each encoded segment derives its first dts from its own B-frame delay; keep dts rising across joins.
        max((media.dts ?? pts) - timeline.videoOrigin, lastDTS == .min ? .min : lastDTS + 1)
    }
}

/// The presentation range of the packaging segment being filled, on the source clock.
struct SegmentSpan {
    var start: Int64 = 0
    var minPTS = Int64.max
    var maxPTS = Int64.min
    var end = Int64.min
    var isEmpty: Bool { minPTS == .max }

    mutating func add(pts: Int64, end frameEnd: Int64, isFirst: Bool) {
        if isFirst { start = pts }
        minPTS = min(minPTS, pts)
        maxPTS = max(maxPTS, pts)
        end = max(end, frameEnd)
    }
}
