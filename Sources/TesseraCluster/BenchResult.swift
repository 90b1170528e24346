import Foundation
import TesseraCore
import TesseraEngine

/// Benchmark only: what a worker started with `--bench-skip-encode` returns instead of encoding, so
/// `bench/run` can measure how many segments and bytes one coordinator moves per second, and its
/// memory on long inputs, without paying for the encodes.
///
/// The result has the job's real SPS/PPS, one packet per frame with the frame's pts, and the asked-for
/// size, but the slices are filler: the file it stitches into is no video. Workers announce the mode
/// in their capabilities and a coordinator gives them work only when it benchmarks too.
enum BenchResult {
    static let capability = "bench-skip-encode"

    /// The job's headers, made once per output format and settings (opening libx264 costs milliseconds).
    static let headers = Locked<[Key: [UInt8]]>([:])
    /// Filler frames by size.
    static let fillers = Locked<[Int: (idr: [UInt8], slice: [UInt8])]>([:])

    struct Key: Hashable {
        var output: VideoOutputFormat
        var settings: EncoderSettings
    }

    static func make(for task: SegmentTask, bytesPerFrame: Int) throws(TesseraError) -> EncodedSegment {
        let started = Date()
        let header = task.header
        let key = Key(output: header.output, settings: header.settings)
        let extradata: [UInt8]
        if let known = headers.current[key] {
            extradata = known
        } else {
            extradata = try SegmentEncoder.headers(header.output, header.settings)
            headers.withValue { $0[key] = extradata }
        }
        let range = header.segment.startPTS..<header.segment.endPTS
        let shown = task.packets.filter { !$0.isDiscard }.compactMap(\.pts).filter { range.contains($0) }.sorted()
        // An Annex B slice NAL (IDR first) of filler that holds no start code, made once per size: the
        // packets share it (what a benchmark worker spends is not what the benchmark measures).
        let filler = fillers.withValue { known in
            if let made = known[bytesPerFrame] { return made }
            let body = [UInt8](repeating: 0xA5, count: max(1, bytesPerFrame - 5))
            let made = (idr: [0, 0, 0, 1, 0x65] + body, slice: [0, 0, 0, 1, 0x41] + body)
            known[bytesPerFrame] = made
            return made
        }
        let packets = shown.enumerated().map { n, pts in
            let next = n + 1 < shown.count ? shown[n + 1] : range.upperBound
            return MediaPacket(pts: pts, dts: pts, duration: next - pts, flags: n == 0 ? MediaPacket.keyFlag : 0,
                               data: n == 0 ? filler.idr : filler.slice)
        }
        return EncodedSegment(jobID: header.jobID, index: header.segment.index, timeBase: header.timeBase, extradata: extradata,
                              frameCount: packets.count, decodedFrames: 0, encodeSeconds: Date().timeIntervalSince(started),
                              packets: packets)
    }
}
