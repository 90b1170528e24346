import FFmpegKit
import Foundation
import TesseraCore

/// Finds the scene changes of a stream whose keyframes say nothing about them (a fixed cadence, or an
/// intra-only codec), decoding as little as it can: first every keyframe on its own, compared with the
/// one before by colour histogram (a camera move keeps it, a cut does not); then, only between two
/// keyframes that differ, every frame, to find where the new scene starts (a jump in both the picture
/// and its histogram, far above the frames around it). Runs over several threads: at a job's start the
/// encoders have nothing to do yet.
public enum SceneAnalysis {
    /// What the analysis found and what it cost.
    public struct Result: Sendable, Hashable {
        public var scenes: DecodedScenes
        public var decodedFrames: Int
        public var seconds: Double
    }

    /// Histogram distance (L1 over Y, U and V, 0 to 2) between two keyframes worth looking between.
    static let keyframeChange = 0.25
    /// A cut: the histogram moves this much from one frame to the next, and the picture changes by at
    /// least `cutDifference` (mean absolute difference of the thumbnails, 0 to 255) and four times as
    /// much as the interval's median.
    static let cutHistogram = 0.2
    static let cutDifference = 10.0

    /// Scene changes within each interval between two random-access points (display positions).
    public static func run(_ probe: ProbeResult, planner: CutPlanner, intervals: [ClosedRange<Int>], threads: Int) throws(TesseraError) -> Result {
        let started = Date()
        let ends = Array(Set(intervals.flatMap { [$0.lowerBound, $0.upperBound] })).sorted()
        let keyframes = try parallel(chunks(ends, threads)) { (positions) throws(TesseraError) -> [Int: Thumbnail] in
            try Reader(probe, planner).thumbnails(of: positions)
        }.reduce(into: [Int: Thumbnail]()) { $0.merge($1) { a, _ in a } }
        let flagged = intervals.filter { interval in
            guard let a = keyframes[interval.lowerBound], let b = keyframes[interval.upperBound] else { return false }
            return a.histogramDistance(b) >= keyframeChange
        }
        let cuts = try parallel(chunks(flagged, threads)) { (intervals) throws(TesseraError) -> [Int] in
            let reader = try Reader(probe, planner)
            var cuts: [Int] = []
            for interval in intervals {
                cuts += try reader.cuts(between: interval.lowerBound, and: interval.upperBound, keyframes: keyframes)
            }
            return cuts
        }.flatMap { $0 }.sorted()
        let decoded = ends.count + flagged.reduce(0) { $0 + $1.upperBound - $1.lowerBound }
        return Result(scenes: DecodedScenes(examined: intervals, cuts: cuts), decodedFrames: decoded,
                      seconds: Date().timeIntervalSince(started))
    }

    /// `items` in `count` contiguous runs of about equal length.
    static func chunks<T>(_ items: [T], _ count: Int) -> [[T]] {
        let n = max(1, min(count, items.count))
        return (0..<n).map { k in Array(items[(items.count * k / n)..<(items.count * (k + 1) / n)]) }.filter { !$0.isEmpty }
    }

    /// Runs `work` on each chunk on a thread of its own; the first error wins.
    static func parallel<T: Sendable, R: Sendable>(_ chunks: [T], _ work: @escaping @Sendable (T) throws(TesseraError) -> R) throws(TesseraError) -> [R] {
        let results = Locked<[Int: Swift.Result<R, TesseraError>]>([:])
        let group = DispatchGroup()
        for (k, chunk) in chunks.enumerated() {
            _ = startThread(name: "tessera-scenes-\(k)", group: group) {
                let result = Swift.Result { () throws(TesseraError) in try work(chunk) }
                results.withValue { $0[k] = result }
            }
        }
        group.wait()
        return try results.current.sorted { $0.key < $1.key }.map { (entry) throws(TesseraError) -> R in try entry.value.get() }
    }

    /// A 64x36 picture of a frame, with its colour histogram.
    struct Thumbnail: Sendable {
        static let width = 64, height = 36, bins = 32
        var luma: [UInt8]
        var histogram: [Double]

        init(_ frame: Frame) {
            var luma = [UInt8](repeating: 0, count: Self.width * Self.height)
            var histogram = [Double](repeating: 0, count: 3 * Self.bins)
            for plane in 0..<3 {
                frame.withPlane(plane) { data, stride in
                    for y in 0..<Self.height {
                        for x in 0..<Self.width {
                            let v = data[y * stride + x]
                            if plane == 0 { luma[y * Self.width + x] = v }
                            histogram[plane * Self.bins + Int(v) * Self.bins / 256] += 1
                        }
                    }
                }
            }
            self.luma = luma
            self.histogram = histogram.map { $0 / Double(Self.width * Self.height) }
        }

        /// L1 distance of the histograms, averaged over the planes: 0 (same) to 2.
        func histogramDistance(_ other: Thumbnail) -> Double {
            zip(histogram, other.histogram).reduce(0) { $0 + abs($1.0 - $1.1) } / 3
        }

        /// Mean absolute difference of the luma pictures.
        func difference(_ other: Thumbnail) -> Double {
            Double(zip(luma, other.luma).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(luma.count)
        }
    }

    /// Reads and decodes chosen frames of the input on one thread.
    final class Reader {
        let probe: ProbeResult
        let planner: CutPlanner
        let input: MediaInput
        let decoder: Decoder
        let scaler: Scaler
        let packet = Packet()
        let frame = Frame()
        /// The packet just read, by decode-order index; nil before the first read after a seek.
        var current: Int?
        /// Probe entries by (pts, dts, size), to know where a seek landed.
        let lookup: [SegmentReader.Key: [Int]]

        init(_ probe: ProbeResult, _ planner: CutPlanner) throws(TesseraError) {
            self.probe = probe
            self.planner = planner
            do {
                input = try probe.openInput(probedStreams: probe.streams.count)
                decoder = try Decoder(input: input, streamIndex: probe.video.index)
                decoder.skipLoopFilter()
                scaler = try Scaler(width: Int32(Thumbnail.width), height: Int32(Thumbnail.height), pixelFormat: "yuv444p", quality: "area")
            } catch {
                throw .input(probe.path, "cannot read for scene analysis (\(error.message))")
            }
            lookup = Dictionary(grouping: probe.packets.indices) { SegmentReader.Key(pts: probe.packets[$0].pts, dts: probe.packets[$0].dts, size: probe.packets[$0].size) }
        }

        /// Thumbnails of the frames at these display positions (random-access points), each decoded alone.
        func thumbnails(of positions: [Int]) throws(TesseraError) -> [Int: Thumbnail] {
            var out: [Int: Thumbnail] = [:]
            for position in positions {
                let index = planner.packetIndex(atDisplayPosition: position)
                let pts = probe.packets[index].pts
                try decode(from: index, through: index) { frame in
                    if frame.pts == pts { out[position] = Thumbnail(try scaler.scale(frame)) }
                }
            }
            return out
        }

        /// The cuts strictly after display position `from` through `to` (both random-access points).
        func cuts(between from: Int, and to: Int, keyframes: [Int: Thumbnail]) throws(TesseraError) -> [Int] {
            let first = planner.packetIndex(atDisplayPosition: from)
            let last = planner.packetIndex(atDisplayPosition: to) - 1
            let low = planner.pts(atDisplayPosition: from), high = planner.pts(atDisplayPosition: to)
            var pictures: [(pts: Int64, thumbnail: Thumbnail)] = []
            if last >= first {
                try decode(from: first, through: last) { frame in
                    if let pts = frame.pts, pts >= low, pts < high { pictures.append((pts, Thumbnail(try scaler.scale(frame)))) }
                }
            }
            pictures.sort { $0.pts < $1.pts }
            guard let end = keyframes[to] else { return [] }
            let sequence = pictures.map(\.thumbnail) + [end]
            let positions = pictures.compactMap { planner.displayPosition(of: $0.pts) } + [to]
            guard sequence.count >= 2, positions.count == sequence.count else { return [] }
            let changes = (1..<sequence.count).map { sequence[$0].difference(sequence[$0 - 1]) }
            let median = changes.sorted()[changes.count / 2]
            return (1..<sequence.count).filter { k in
                changes[k - 1] >= max(cutDifference, 4 * median)
                    && sequence[k].histogramDistance(sequence[k - 1]) >= cutHistogram
            }.map { positions[$0] }
        }

        /// Decodes packets `first...last` (decode order) afresh, handing each frame out.
        func decode(from first: Int, through last: Int, _ body: (Frame) throws -> Void) throws(TesseraError) {
            do {
                try position(at: first)
                decoder.flush()
                while let index = current, index <= last {
                    while try decoder.send(packet) == .needsInput { try drain(body) }
                    try drain(body)
                    try advance()
                }
                _ = try decoder.send(nil)
                try drain(body)
            } catch let error as TesseraError {
                throw error
            } catch {
                throw .input(probe.path, "scene analysis: \(error)")
            }
        }

        func drain(_ body: (Frame) throws -> Void) throws {
            while try decoder.receive(frame) == .ready {
                defer { frame.unref() }
                try body(frame)
            }
        }

        /// Leaves `packet` holding video packet `index`: reading on when it is a little ahead, else after a
        /// seek near it (earlier on each try, then from the start).
        func position(at index: Int) throws {
            if let current, current <= index, index - current < 512 {
                while self.current! < index { try advance() }
                return
            }
            let target = probe.packets[index]
            let anchor = target.dts ?? target.pts ?? 0
            for margin in [0.0, 2, 10, 60] {
                try input.seek(stream: probe.video.index, toOrBefore: anchor - Int64(margin / probe.video.timeBase.doubleValue))
                current = nil
                try advance()
                if let at = current, at <= index {
                    while self.current! < index { try advance() }
                    if current == index { return }
                }
            }
            try input.seekToStart()
            current = nil
            try advance()
            while let at = current, at < index { _ = at; try advance() }
            guard current == index else {
                throw TesseraError.input(probe.path, "scene analysis could not find packet \(index) (file changed?)")
            }
        }

        /// Reads the next video packet and works out its index.
        func advance() throws {
            while true {
                guard try input.read(into: packet) else { current = Int.max; return }
                guard packet.streamIndex == probe.video.index else { continue }
                if let at = current {
                    current = at + 1
                } else {
                    // Where a seek landed: the earliest probe entry that matches.
                    guard let at = lookup[SegmentReader.Key(pts: packet.pts, dts: packet.dts, size: packet.size)]?.first else { continue }
                    current = at
                }
                return
            }
        }
    }
}
