import FFmpegKit
import Foundation
import TesseraCore

/// Finds the scene changes of a stream whose keyframes say nothing about them (a fixed cadence, or an
/// intra-only codec), decoding as little as it can: first every keyframe on its own, compared with the
/// one before by colour histogram (a camera move keeps it, a cut does not), and the packet sizes between
/// them (a flash or a cut inside a GOP makes one packet far larger); then, only in the intervals either
/// points at (and where grain may make a scene cut of its own), every frame, halved as libx264's lookahead
/// halves it (from the output's size, at most 640x360), with its estimates of the frame's cost alone and
/// from the frame before (`LookaheadCost`), which its scene-cut test compares. Runs over several threads:
/// at a job's start the encoders have nothing to do yet.
public enum SceneAnalysis {
    /// What the analysis found and what it cost.
    public struct Result: Sendable, Hashable {
        public var scenes: DecodedScenes
        public var decodedFrames: Int
        public var seconds: Double
    }

    /// Histogram distance (L1 over Y, U and V, 0 to 2) between two keyframes worth looking between.
    static let keyframeChange = 0.25
    /// Intervals examined after a flagged one while every frame may pass the scene-cut test.
    static let longestRun = 2
    /// Intervals are sampled for grain where the scene-cut test asks for a share at most this high (from
    /// about 60 frames after an IDR at keyint 250), and examined where a sample comes this close to it.
    static let sampledBelow = 0.85
    static let grainMargin = 0.08

    /// Scene changes within each interval between two random-access points (display positions), estimated
    /// on pictures of the output's size (`picture`), halved as libx264's lookahead halves them; `options`
    /// say where the whole-file encode's IDRs fall from what is found (its keyint, minimum interval, B-frames).
    public static func run(_ probe: ProbeResult, planner: CutPlanner, intervals: [ClosedRange<Int>], picture: (width: Int, height: Int),
                           options: PlanOptions, threads: Int) throws(TesseraError) -> Result {
        let started = Date()
        let decoded = Locked(0)
        let ends = Array(Set(intervals.flatMap { [$0.lowerBound, $0.upperBound] })).sorted()
        let keyframes = try parallel(chunks(ends, threads)) { (positions) throws(TesseraError) -> [Int: Thumbnail] in
            try Reader(probe, planner, picture: nil, counting: decoded).thumbnails(of: positions)
        }.reduce(into: [Int: Thumbnail]()) { $0.merge($1) { a, _ in a } }
        let differing = intervals.filter { interval in
            guard let a = keyframes[interval.lowerBound], let b = keyframes[interval.upperBound] else { return false }
            return a.histogramDistance(b) >= keyframeChange
        }
        let flagged = Array(Set(differing + planner.intervalsWithLargeFrames(intervals))).sorted { $0.lowerBound < $1.lowerBound }
        // Above 360p the estimate runs on a smaller picture: on the test clips and real footage its decisions
        // at 640x360 were those at 1280x720, at a quarter of the cost.
        let shrink = min(1, (Double(640 * 360) / Double(max(1, picture.width * picture.height))).squareRoot())
        let size = (width: max(32, Int(Double(picture.width) * shrink) & ~1), height: max(32, Int(Double(picture.height) * shrink) & ~1))
        var following = Dictionary(intervals.map { ($0.lowerBound, $0) }) { a, _ in a }
        if let last = intervals.map(\.upperBound).max(), last < planner.frameCount - 1 { following[last] = last...(planner.frameCount - 1) }
        var examined = Set<ClosedRange<Int>>(), found: [Int: SceneChange] = [:]

        // The changes within `intervals`, estimated over `threads`.
        func estimate(_ intervals: [ClosedRange<Int>]) throws(TesseraError) -> [SceneChange] {
            try parallel(chunks(intervals, threads)) { (intervals) throws(TesseraError) -> [SceneChange] in
                let reader = try Reader(probe, planner, picture: size, counting: decoded)
                var changes: [SceneChange] = []
                // Adjacent intervals in one pass: the frames just past one are the next one's first.
                for run in adjacentRuns(intervals) {
                    changes += try reader.changes(between: run.lowerBound, and: run.upperBound).changes
                }
                return changes
            }.flatMap { $0 }
        }

        // A frame that may pass the test at an interval's end runs on into the next interval: libx264 takes a
        // frame for a scene cut only where the frame after it does not pass as well. In grain that can run on
        // and on; after `longestRun` intervals the frame after the last is taken to pass, unmeasured.
        // `start`'s changes are `computed` when given (examined while sampling).
        func examine(_ start: [ClosedRange<Int>], computed: [SceneChange]? = nil) throws(TesseraError) {
            var pending = start.map { ($0, 0) }
            var computed = computed
            while !pending.isEmpty {
                examined.formUnion(pending.map(\.0))
                let changes: [SceneChange]
                if let given = computed { changes = given } else { changes = try estimate(pending.map(\.0)) }
                computed = nil
                for change in changes where found[change.frame].map({ $0.unmeasured == true }) ?? true { found[change.frame] = change }
                var next: [(ClosedRange<Int>, Int)] = []
                for (interval, run) in pending where found[interval.upperBound + 1] != nil {
                    guard let after = following[interval.upperBound], !examined.contains(after) else { continue }
                    if run < longestRun {
                        next.append((after, run + 1))
                    } else if found[interval.upperBound + 2] == nil {
                        found[interval.upperBound + 2] = .unmeasured(interval.upperBound + 2)
                    }
                }
                pending = next
            }
        }
        try examine(flagged)

        // Grain and sensor noise: libx264's bias grows with the GOP, and where every frame costs a high share
        // of its intra cost, a frame passes once the bias is high enough, with no cut in sight. An interval
        // the forecast so far puts far enough from an IDR is sampled (the two frames after its first
        // keyframe) and examined, in the same pass, when the sample comes within `grainMargin` of the test there.
        var sampled = Set<ClosedRange<Int>>()
        for _ in 0..<3 {
            var told = options
            told.decodedScenes = DecodedScenes(examined: intervals, cuts: [], changes: Array(found.values))
            let idrs = planner.forecast(told).keyframes
            func threshold(_ interval: ClosedRange<Int>) -> Double {
                planner.sceneCutThreshold(gop: interval.upperBound - (idrs.last { $0 < interval.upperBound } ?? 0), options)
            }
            let open = intervals.filter { !examined.contains($0) && !sampled.contains($0) && $0.count > 2 && threshold($0) <= sampledBelow }
            guard !open.isEmpty else { break }
            sampled.formUnion(open)
            let tests = open.map { ($0, threshold($0) - grainMargin) }
            // Taken one at a time from a shared queue: the intervals examined through cost far more than the others.
            let next = Locked(0)
            let samples = try parallel(Array(repeating: tests, count: min(threads, tests.count))) { (tests) throws(TesseraError) -> [(ClosedRange<Int>, [SceneChange])] in
                let reader = try Reader(probe, planner, picture: size, counting: decoded)
                var samples: [(ClosedRange<Int>, [SceneChange])] = []
                while case let k = next.withValue({ (n: inout Int) -> Int in n += 1; return n - 1 }), k < tests.count {
                    let (interval, least) = tests[k]
                    let sampled = try reader.changes(between: interval.lowerBound, and: interval.upperBound, examiningFrom: least)
                    if sampled.complete { samples.append((interval, sampled.changes)) }
                }
                return samples
            }.flatMap { $0 }
            guard !samples.isEmpty else { break }
            try examine(samples.map(\.0), computed: samples.flatMap(\.1))
        }

        let changes = found.values.sorted { $0.frame < $1.frame }
        let estimated = examined.reduce(0) { $0 + $1.upperBound - $1.lowerBound }
        var scenes = DecodedScenes(examined: intervals, cuts: [], changes: changes)
        scenes.grain = estimated > 0 && 2 * changes.filter { $0.unmeasured != true }.count >= estimated
        return Result(scenes: scenes, decodedFrames: decoded.current, seconds: Date().timeIntervalSince(started))
    }

    /// Sorted intervals with adjacent ones (one's end the next one's start) joined.
    static func adjacentRuns(_ intervals: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
        intervals.sorted { $0.lowerBound < $1.lowerBound }.reduce(into: []) { runs, interval in
            if let last = runs.last, last.upperBound == interval.lowerBound {
                runs[runs.count - 1] = last.lowerBound...interval.upperBound
            } else {
                runs.append(interval)
            }
        }
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

    /// The colour histogram of a 64x36 picture of a frame.
    struct Thumbnail: Sendable {
        static let width = 64, height = 36, bins = 32
        var histogram: [Double]

        init(_ frame: Frame) {
            var histogram = [Double](repeating: 0, count: 3 * Self.bins)
            for plane in 0..<3 {
                frame.withPlane(plane) { data, stride in
                    for y in 0..<Self.height {
                        for x in 0..<Self.width {
                            let v = data[y * stride + x]
                            histogram[plane * Self.bins + Int(v) * Self.bins / 256] += 1
                        }
                    }
                }
            }
            self.histogram = histogram.map { $0 / Double(Self.width * Self.height) }
        }

        /// L1 distance of the histograms, averaged over the planes: 0 (same) to 2.
        func histogramDistance(_ other: Thumbnail) -> Double {
            zip(histogram, other.histogram).reduce(0) { $0 + abs($1.0 - $1.1) } / 3
        }
    }

    /// Reads and decodes chosen frames of the input on one thread.
    final class Reader {
        let probe: ProbeResult
        let planner: CutPlanner
        var input: MediaInput
        let decoder: Decoder
        let scaler: Scaler
        /// The output's size, grey: the picture the lookahead halves.
        let pictureScaler: Scaler?
        let picture: (width: Int, height: Int)?
        let packet = Packet()
        let frame = Frame()
        /// Frames decoded, by every reader of one analysis.
        let decoded: Locked<Int>
        /// The packet just read, by decode-order index; nil before the first read after a seek.
        var current: Int?
        /// Read back to the start: the first video packet is the probe's first, with or without a timestamp.
        var atStart = false
        /// Knows where a seek landed.
        let landing: PacketLanding

        init(_ probe: ProbeResult, _ planner: CutPlanner, picture: (width: Int, height: Int)?, counting decoded: Locked<Int>) throws(TesseraError) {
            self.probe = probe
            self.planner = planner
            self.decoded = decoded
            do {
                input = try probe.openInput(probedStreams: probe.streams.count)
                decoder = try Decoder(input: input, streamIndex: probe.video.index)
                decoder.skipLoopFilter()
                scaler = try Scaler(width: Int32(Thumbnail.width), height: Int32(Thumbnail.height), pixelFormat: "yuv444p", quality: "area")
                self.picture = picture
                pictureScaler = try picture.map { (size) throws(FFmpegError) in
                    try Scaler(width: Int32(size.width), height: Int32(size.height), pixelFormat: "gray", quality: "area")
                }
            } catch {
                throw .input(probe.path, "cannot read for scene analysis (\(error.message))")
            }
            landing = PacketLanding(probe.packets)
        }

        /// Thumbnails of the frames at these display positions (random-access points), each decoded alone.
        func thumbnails(of positions: [Int]) throws(TesseraError) -> [Int: Thumbnail] {
            var out: [Int: Thumbnail] = [:]
            for position in positions {
                let index = planner.packetIndex(atDisplayPosition: position)
                let pts = probe.packets[index].pts
                try decode(from: index, through: index) { frame in
                    if frame.pts == pts { out[position] = Thumbnail(try scaler.scale(frame)) }
                    return true
                }
            }
            return out
        }

        /// The lookahead estimates of the frames after display position `from` through the one after `to`
        /// (both random-access points) that could pass libx264's scene-cut test. With `examiningFrom`, the
        /// two frames after `from` first: when neither reaches it, only theirs, not `complete`.
        func changes(between from: Int, and to: Int, examiningFrom least: Double? = nil) throws(TesseraError)
            -> (changes: [SceneChange], complete: Bool) {
            guard let pictureScaler, let picture else { return ([], true) }
            let through = min(to + 2, planner.frameCount - 1)
            let first = planner.packetIndex(atDisplayPosition: from)
            let final = planner.lastPacketIndex(throughDisplayPosition: through)
            let low = planner.pts(atDisplayPosition: from), high = planner.pts(atDisplayPosition: through)
            // Frames come out of the decoder in display order; three at a time are kept.
            struct Estimated {
                var position: Int
                var picture: LowresPicture
                var intra: [Int32]
                var alone: Int
                func share(from reference: Estimated) -> Double {
                    Double(LookaheadCost.frameCost(picture, intra: intra, from: reference.picture)) / Double(max(1, alone))
                }
            }
            var last: Estimated?, beforeLast: Estimated?
            /// The last frame's share, when it may pass: its skipping share comes with the next frame.
            var open: (position: Int, change: Double)?
            var changes: [SceneChange] = []
            var complete = true
            try decode(from: first, through: final) { frame in
                guard let pts = frame.pts, pts >= low, pts <= high, let position = planner.displayPosition(of: pts),
                      position > (last?.position ?? -1) else { return true }
                let scaled = try pictureScaler.scale(frame)
                let lowres = scaled.withPlane(0) { data, stride in
                    LowresPicture(halving: UnsafeBufferPointer(start: data, count: stride * picture.height), stride: stride,
                                  width: picture.width, height: picture.height)
                }
                let intra = LookaheadCost.intra(lowres)
                let entry = Estimated(position: position, picture: lowres, intra: intra, alone: LookaheadCost.frameCost(intra: intra, of: lowres))
                if let waiting = open {
                    let skipping = position == waiting.position + 1 && beforeLast?.position == waiting.position - 1
                        ? entry.share(from: beforeLast!) : 1
                    changes.append(SceneChange(frame: waiting.position, change: waiting.change, skipping: skipping))
                    open = nil
                }
                if let least, position == from + 3, (changes.map(\.change).max() ?? 0) < least {
                    complete = false
                    return false
                }
                if let previous = last, previous.position == position - 1, position <= to + 1 {
                    let change = entry.share(from: previous)
                    if change >= SceneChange.least - 0.01 { open = (position, change) }
                }
                beforeLast = last
                last = entry
                return true
            }
            if let waiting = open { changes.append(SceneChange(frame: waiting.position, change: waiting.change, skipping: 1)) }
            return (changes, complete)
        }

        /// Decodes packets `first...last` (decode order) afresh, handing each frame out until `body` says stop.
        func decode(from first: Int, through last: Int, _ body: (Frame) throws -> Bool) throws(TesseraError) {
            do {
                try position(at: first)
                decoder.flush()
                while let index = current, index <= last {
                    while try decoder.send(packet) == .needsInput { guard try drain(body) else { return } }
                    guard try drain(body) else { return }
                    try advance()
                }
                _ = try decoder.send(nil)
                _ = try drain(body)
            } catch let error as TesseraError {
                throw error
            } catch {
                throw .input(probe.path, "scene analysis: \(error)")
            }
        }

        /// Hands out the frames the decoder has ready; false when `body` said stop.
        func drain(_ body: (Frame) throws -> Bool) throws -> Bool {
            while try decoder.receive(frame) == .ready {
                defer { frame.unref() }
                decoded.withValue { $0 += 1 }
                guard try body(frame) else { return false }
            }
            return true
        }

        /// Leaves `packet` holding video packet `index`: reading on when it is a little ahead, else after a
        /// seek near it (earlier on each try, then from the start).
        func position(at index: Int) throws {
            let anchor = probe.packets.seekTime(forPacket: index)
            // Read on up to 512 packets; any distance in an input without times to seek to.
            if let current, current <= index, index - current < 512 || anchor == nil {
                while self.current! < index { try advance() }
                return
            }
            // A demuxer that cannot seek by time (a raw elementary stream) is read from its start.
            for margin in [0.0, 2, 10, 60] {
                guard let anchor,
                      (try? input.seek(stream: probe.video.index, toOrBefore: anchor - Int64(margin / probe.video.timeBase.doubleValue))) != nil
                else { break }
                current = nil
                atStart = false
                try advance()
                if let at = current, at <= index {
                    while self.current! < index { try advance() }
                    if current == index { return }
                }
            }
            // From the start; then from a fresh open, for a demuxer whose times after a seek are not the probe's.
            for fresh in [false, true] {
                if fresh {
                    input = try probe.openInput(probedStreams: probe.streams.count)
                } else if (try? input.seekToStart()) == nil {
                    continue
                }
                current = nil
                atStart = true
                try advance()
                while let at = current, at < index { _ = at; try advance() }
                if current == index { return }
            }
            throw TesseraError.input(probe.path, "scene analysis could not find packet \(index) (file changed?)")
        }

        /// Reads the next video packet and works out its index.
        func advance() throws {
            while true {
                guard try input.read(into: packet) else { current = Int.max; return }
                guard packet.streamIndex == probe.video.index else { continue }
                if let at = current {
                    current = at + 1
                } else {
                    let found = landing.index(of: packet, atStart: atStart)
                    atStart = false
                    guard let at = found else { continue }
                    current = at
                }
                if let at = current, at < probe.packets.count, probe.packets[at].ptsInferred { packet.pts = probe.packets[at].pts }
                return
            }
        }
    }
}
