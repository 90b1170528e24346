import Foundation

/// One segment's first-pass statistics, as libx264 writes them (`stats` file): the options line, then
/// one entry per frame. Only what the allocation needs is kept. libx265's file has the same shape (its rate control
/// is x264's): the size as `input-res`, the frame rate as `fps` in place of per-frame durations, `icu` for `imb`.
public struct FirstPassStats: Hashable, Sendable {
    public struct Frame: Hashable, Sendable {
        /// x264's picture type: `I` (IDR), `i`, `P`, `B` (reference B), `b`.
        public var type: Character
        /// In half ticks of the stats' time base (x264's time scale is twice the time base's denominator).
        public var duration: Int64
        /// The quantiser the first pass encoded it at.
        public var qp: Double
        public var textureBits: Double
        public var motionBits: Double
        public var miscBits: Double
        /// Intra macroblocks.
        public var intraMacroblocks: Double
    }

    public var width: Int
    public var height: Int
    public var timeBase: Rational
    public var bframes: Int
    public var macroblockTree: Bool
    public var qcompress: Double
    public var ipRatio: Double
    public var pbRatio: Double
    public var qpMin: Double
    public var qpMax: Double
    public var qpStep: Double
    public var complexityBlur: Double
    public var quantizerBlur: Double
    /// In input (display) order, as x264 indexes them.
    public var frames: [Frame]

    public var macroblocks: Int { ((width + 15) / 16) * ((height + 15) / 16) }

    /// Seconds the segment lasts, as x264 counts them for its bitrate.
    public var seconds: Double {
        Double(frames.reduce(0) { $0 + $1.duration }) * timeBase.doubleValue / 2
    }

    func frameSeconds(_ f: Frame) -> Double { Double(f.duration) * timeBase.doubleValue / 2 }

    public init(width: Int, height: Int, timeBase: Rational, bframes: Int = 3, macroblockTree: Bool = true,
                qcompress: Double = 0.6, ipRatio: Double = 1.4, pbRatio: Double = 1.3, qpMin: Double = 0, qpMax: Double = 69,
                qpStep: Double = 4, complexityBlur: Double = 20, quantizerBlur: Double = 0.5, frames: [Frame]) {
        self.width = width
        self.height = height
        self.timeBase = timeBase
        self.bframes = bframes
        self.macroblockTree = macroblockTree
        self.qcompress = qcompress
        self.ipRatio = ipRatio
        self.pbRatio = pbRatio
        self.qpMin = qpMin
        self.qpMax = qpMax
        self.qpStep = qpStep
        self.complexityBlur = complexityBlur
        self.quantizerBlur = quantizerBlur
        self.frames = frames
    }

    /// Parses libx264's or libx265's stats text; throws on anything it cannot read.
    public init(parsing text: String) throws(TwoPassError) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        guard let first = lines.first, first.hasPrefix("#options: ") else { throw .stats("no options line") }
        var options: [Substring: Substring] = [:]
        let words = first.dropFirst("#options: ".count).split(separator: " ")
        for word in words {
            guard let eq = word.firstIndex(of: "=") else { continue }
            options[word[..<eq]] = word[word.index(after: eq)...]
        }
        // x264 leads with the size; x265 names it.
        let sizeText = words.first.flatMap { $0.contains("=") ? nil : $0 } ?? options["input-res"]
        guard let size = sizeText?.split(separator: "x"), size.count == 2, let w = Int(size[0]), let h = Int(size[1]), w > 0, h > 0 else {
            throw .stats("no frame size in the options line")
        }
        func number(_ key: Substring, _ fallback: Double? = nil) throws(TwoPassError) -> Double {
            if let text = options[key], let value = Double(text.split(separator: ":").first ?? text) { return value }
            if let fallback { return fallback }
            throw .stats("no \(key) in the options line")
        }
        // x265 writes no durations: its frames last one period of `fps`, two half ticks of a time base of that period.
        let x265 = options["timebase"] == nil && options["fps"] != nil
        let fps = options["fps"]?.split(separator: "/")
        guard let tb = x265 ? fps.map({ Array($0.reversed()) }) : options["timebase"]?.split(separator: "/"), tb.count == 2,
              let num = Int32(tb[0]), let den = Int32(tb[1]), num > 0, den > 0 else { throw .stats("no timebase in the options line") }
        width = w
        height = h
        timeBase = Rational(num, den)
        bframes = Int(try number("bframes", 0))
        macroblockTree = try number("mbtree", 0) != 0 || words.contains("cutree")
        qcompress = try number("qcomp", 0.6)
        ipRatio = try number(x265 ? "ipratio" : "ip_ratio", 1.4)
        pbRatio = try number(x265 ? "pbratio" : "pb_ratio", 1.3)
        qpMin = try number("qpmin", 0)
        qpMax = try number("qpmax", 69)
        qpStep = try number("qpstep", 4)
        complexityBlur = try number("cplxblur", 20)
        quantizerBlur = try number("qblur", 0.5)

        var entries: [(input: Int, frame: Frame)] = []
        for line in lines.dropFirst() {
            for entry in line.split(separator: ";") where entry.contains("in:") {
                var fields: [Substring: Substring] = [:]
                for word in entry.split(separator: " ") {
                    guard let colon = word.firstIndex(of: ":") else { continue }
                    fields[word[..<colon]] = word[word.index(after: colon)...]
                }
                guard let input = fields["in"].flatMap({ Int($0) }), let type = fields["type"]?.first, "IiPBb".contains(type),
                      let dur = x265 ? 2 : fields["dur"].flatMap({ Int64($0) }), let q = fields["q"].flatMap({ Double($0) }),
                      let tex = fields["tex"].flatMap({ Double($0) }), let mv = fields["mv"].flatMap({ Double($0) }),
                      let misc = fields["misc"].flatMap({ Double($0) }), let imb = fields[x265 ? "icu" : "imb"].flatMap({ Double($0) }) else {
                    throw .stats("a frame entry it cannot read: \(entry.prefix(80))")
                }
                entries.append((input, Frame(type: type, duration: dur, qp: q, textureBits: tex, motionBits: mv, miscBits: misc,
                                             intraMacroblocks: imb)))
            }
        }
        guard !entries.isEmpty else { throw .stats("no frames") }
        entries.sort { $0.input < $1.input }
        guard entries.enumerated().allSatisfy({ $0.offset == $0.element.input }) else { throw .stats("frame numbers not 0..<\(entries.count)") }
        frames = entries.map(\.frame)
    }
}

public struct TwoPassError: Error, Equatable, CustomStringConvertible {
    public var description: String
    static func stats(_ problem: String) -> TwoPassError { TwoPassError(description: "first-pass statistics: \(problem)") }
    static func budget(_ problem: String) -> TwoPassError { TwoPassError(description: "bit allocation: \(problem)") }
}

/// The whole file's bit allocation from every segment's first pass, as libx264's own second pass makes it across
/// frames (`ratecontrol.c`, `init_pass2`): one rate factor for the file, found by bisection so that the bits
/// predicted at it fill the budget. A segment's budget is what its frames are predicted to take at that rate
/// factor; its own second pass, given that budget, finds the same rate factor, so quality is as even across
/// segments as a whole-file two-pass makes it.
public enum BitAllocation {
    public struct Result: Equatable, Sendable {
        public var rateFactor: Double
        /// Bits per segment.
        public var budgets: [Double]
        /// What each segment's second pass is given: its budget over its duration, in bits per second.
        public var bitrates: [Int]
    }

    /// Budgets for `segments` (in order) so that the file averages `bitrate` bits per second. With `maxrate`
    /// (a VBV cap), no segment's budget is more than the cap lets it spend over its duration: what the cap
    /// keeps from a segment goes to the others, as x264's own second pass moves it to where the buffer is full.
    public static func allocate(_ segments: [FirstPassStats], bitrate: Int, maxrate: Int? = nil) throws(TwoPassError) -> Result {
        guard !segments.isEmpty else { throw .budget("no segments") }
        let seconds = segments.reduce(0) { $0 + $1.seconds }
        guard seconds > 0, bitrate > 0 else { throw .budget("no duration or no bitrate") }
        let available = Double(bitrate) * seconds
        let models = segments.map(SegmentModel.init)
        let caps = segments.map { s in maxrate.map { Double($0) * s.seconds } ?? .infinity }
        func bits(_ k: Int, _ rf: Double) -> Double { min(models[k].bits(rateFactor: rf), max(caps[k], models[k].constantBits)) }
        func total(_ rf: Double) -> Double { models.indices.reduce(0) { $0 + bits($1, rf) } }
        let floor = models.reduce(0) { $0 + $1.constantBits }
        guard available > floor else { throw .budget("\(bitrate) b/s is below what the headers alone take (\(Int(floor / seconds)) b/s)") }
        // Predicted bits rise with the rate factor: bisect in its logarithm.
        var lo = log(1e-9), hi = log(1e9)
        for _ in 0..<200 {
            let mid = (lo + hi) / 2
            if total(exp(mid)) > available { hi = mid } else { lo = mid }
        }
        let rf = exp(lo)
        let budgets = models.indices.map { bits($0, rf) }
        let bitrates = zip(budgets, segments).map { budget, s in
            // libx264 takes whole kilobits per second.
            Int((budget / s.seconds / 1000).rounded()) * 1000
        }
        return Result(rateFactor: rf, budgets: budgets, bitrates: bitrates)
    }

    /// A segment's first-pass bitrate: the file's, times the source's own bit rate over the segment against its
    /// rate over the file to the power 1.5 (within 0.4 and 1.5 times). A source encoded at
    /// even quality spends its bits as the content asks, so each first pass runs nearer the quantiser its second
    /// pass will have, where libx264's bits-from-quantiser model holds; at the file's bitrate, a segment much
    /// easier or harder than the file's average would run far from it, and its budget and its second pass
    /// would miss (see docs/architecture.md).
    public static func firstPassBitrate(_ bitrate: Int, sourceBytes: Int, seconds: Double, fileSourceBytes: Int,
                                        fileSeconds: Double) -> Int {
        guard sourceBytes > 0, seconds > 0, fileSourceBytes > 0, fileSeconds > 0 else { return bitrate }
        // An encode below the source's rate spreads its bits wider than the source does (flat areas empty first).
        let ratio = pow((Double(sourceBytes) / seconds) / (Double(fileSourceBytes) / fileSeconds), 1.5)
        return max(1, Int((Double(bitrate) * min(max(ratio, 0.4), 1.5) / 1000).rounded())) * 1000
    }

    /// Bits of `bitrate` over the segments' duration: the file's target.
    public static func target(_ segments: [FirstPassStats], bitrate: Int) -> Double {
        Double(bitrate) * segments.reduce(0) { $0 + $1.seconds }
    }
}

/// libx264's second-pass model of one segment: each frame's quantiser from its blurred complexity and the rate
/// factor, I and B frames tied to the P frames around them, and the bits a frame takes at a quantiser scaled
/// from what it took at its first-pass quantiser.
struct SegmentModel {
    let stats: FirstPassStats
    let blurred: [Double]
    let firstQScale: [Double]
    let qcompress: Double
    let pbFactor: Double

    init(_ stats: FirstPassStats) {
        self.stats = stats
        firstQScale = stats.frames.map { Self.qscale(qp: $0.qp) }
        // With MB-tree, x264 leaves the frame-level curve flat and the B factor at 1.
        qcompress = stats.macroblockTree ? 1 : stats.qcompress
        pbFactor = stats.macroblockTree ? 1 : stats.pbRatio
        let frames = stats.frames, nmb = Double(stats.macroblocks)
        func complexity(_ j: Int) -> Double {
            let f = frames[j]
            let duration = min(max(stats.frameSeconds(f), 0.01), 1.0) / 0.04
            return (f.textureBits + 0.1 + f.motionBits) / duration
        }
        // Gaussian blur of complexity, cut at scene changes (intra macroblocks), as x264 does.
        var blurred: [Double] = []
        let reach = stats.complexityBlur * 2
        for i in frames.indices {
            var weightSum = 0.0, sum = 0.0, weight = 1.0
            var j = 1
            while Double(j) < reach, j < frames.count - i {
                weight *= 1 - pow(frames[i + j].intraMacroblocks / nmb, 2)
                if weight < 0.0001 { break }
                let g = weight * exp(-Double(j * j) / 200)
                weightSum += g
                sum += g * complexity(i + j)
                j += 1
            }
            weight = 1
            j = 0
            while Double(j) <= reach, j <= i {
                let g = weight * exp(-Double(j * j) / 200)
                weightSum += g
                sum += g * complexity(i - j)
                weight *= 1 - pow(frames[i - j].intraMacroblocks / nmb, 2)
                if weight < 0.0001 { break }
                j += 1
            }
            blurred.append(sum / weightSum)
        }
        self.blurred = blurred
    }

    static func qscale(qp: Double) -> Double { 0.85 * pow(2, (qp - 12) / 6) }
    static func qp(qscale: Double) -> Double { 12 + 6 * log2(qscale / 0.85) }

    var constantBits: Double { stats.frames.reduce(0) { $0 + $1.miscBits } }

    func bits(_ i: Int, at q: Double) -> Double {
        let f = stats.frames[i], q1 = firstQScale[i], q = max(q, 0.1)
        return (f.textureBits + 0.1) * pow(q1 / q, 1.1) + f.motionBits * pow(max(q1, 1) / max(q, 1), 0.5) + f.miscBits
    }

    enum Kind: Int { case p = 0, b = 1, i = 2 }
    static func kind(_ t: Character) -> Kind { t == "I" || t == "i" ? .i : t == "B" || t == "b" ? .b : .p }

    /// Bits predicted for the whole segment at `rateFactor`.
    func bits(rateFactor rf: Double) -> Double {
        let frames = stats.frames, n = frames.count
        let baseComplexity = Double(stats.macroblocks) * (stats.bframes > 0 ? 120 : 80)
        var lastFor = [Double](repeating: pow(baseComplexity, 1 - qcompress) / rf, count: 3)
        var q = [Double](repeating: 0, count: n)
        for i in 0..<n {
            let f = frames[i], k = Self.kind(f.type).rawValue
            let value = pow(blurred[i], 1 - qcompress)
            q[i] = value.isFinite && f.textureBits + f.motionBits > 0 ? value / rf : lastFor[k]
            lastFor[k] = q[i]
        }
        // I and B quantisers follow the P frames (walked backwards, as x264 does).
        let step = pow(2, stats.qpStep / 6), nmb = Double(stats.macroblocks)
        var lastNonB: Kind?
        var accumQP = 0.0, accumNorm = 0.0, lastAccumNorm = 1.0
        for i in stride(from: n - 1, through: 0, by: -1) {
            let f = frames[i], kind = Self.kind(f.type)
            var v = q[i]
            switch kind {
            case .i:
                let pq = accumNorm > 0 ? Self.qscale(qp: accumQP / accumNorm) : v
                if accumNorm <= 0 { v = q[i] } else if accumNorm >= 1 { v = pq / stats.ipRatio } else {
                    v = accumNorm * pq / stats.ipRatio + (1 - accumNorm) * q[i]
                }
            case .b:
                if let lastNonB { v = lastFor[lastNonB.rawValue] }
                if f.type == "b" { v *= pbFactor }
            case .p:
                if lastNonB == .p, f.textureBits == 0 { v = lastFor[Kind.p.rawValue] }
            }
            if lastNonB == kind, kind != .i || lastAccumNorm < 1 {
                let last = lastFor[kind.rawValue]
                v = min(max(v, last / step), last * step)
            }
            lastFor[kind.rawValue] = v
            if kind != .b { lastNonB = kind }
            if kind == .i {
                lastAccumNorm = accumNorm
                accumNorm = 0
                accumQP = 0
            } else if kind == .p {
                let mask = 1 - pow(f.intraMacroblocks / nmb, 2)
                accumQP = mask * (Self.qp(qscale: v) + accumQP)
                accumNorm = mask * (1 + accumNorm)
            }
            q[i] = v
        }
        // A short blur of the quantisers among frames of one type, then x264's soft clip to its range.
        let size = Int(stats.quantizerBlur * 4) | 1
        let lmin = log(Self.qscale(qp: stats.qpMin)), lmax = log(Self.qscale(qp: stats.qpMax))
        var total = 0.0
        for i in 0..<n {
            var v = q[i]
            if size > 1 {
                var sum = 0.0, weights = 0.0
                for j in 0..<size {
                    let idx = i + j - size / 2
                    guard idx >= 0, idx < n, Self.kind(frames[idx].type) == Self.kind(frames[i].type) else { continue }
                    let d = Double(idx - i)
                    let c = stats.quantizerBlur == 0 ? 1 : exp(-d * d / (stats.quantizerBlur * stats.quantizerBlur))
                    sum += q[idx] * c
                    weights += c
                }
                v = sum / weights
            }
            if lmax > lmin {
                let t = (log(v) - lmin) / (lmax - lmin) - 0.5
                v = exp((1 / (1 + exp(-4 * t))) * (lmax - lmin) + lmin)
            }
            total += bits(i, at: v)
        }
        return total
    }
}

/// What a task tells its worker about the passes of a two-pass job: the pass, and for the second pass the
/// segment's bitrate and its own first-pass statistics.
public struct PassInput: Codable, Hashable, Sendable {
    public var pass: Int
    /// Bits per second for this segment's pass: the first's from the source's bits (`BitAllocation.firstPassBitrate`),
    /// the second's its budget over its duration.
    public var bitrate: Int?
    /// libx264's stats text and MB-tree file from this segment's first pass.
    public var stats: String?
    @HexBytes public var macroblockTree: [UInt8]

    public init(pass: Int, bitrate: Int? = nil, stats: String? = nil, macroblockTree: [UInt8] = []) {
        self.pass = pass
        self.bitrate = bitrate
        self.stats = stats
        self.macroblockTree = macroblockTree
    }
}

/// A first pass's result: libx264's stats text and MB-tree file for the segment.
public struct FirstPassOutput: Codable, Hashable, Sendable {
    public var stats: String
    @HexBytes public var macroblockTree: [UInt8]

    public init(stats: String, macroblockTree: [UInt8]) {
        self.stats = stats
        self.macroblockTree = macroblockTree
    }
}
