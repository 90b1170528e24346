import Foundation

/// A frame's luma at half size, as libx264's lookahead sees it: the half-size picture and the three made at
/// half-pixel offsets (each pixel the mean of a 2x2 block of the full-size picture, shifted by one full-size
/// pixel), edges repeated so that blocks and motion vectors may reach past them.
public struct LowresPicture: Sendable {
    static let pad = 32
    public let width: Int
    public let height: Int
    let stride: Int
    /// Whole, half-right, half-down and half-diagonal pixels.
    var planes: [[UInt8]]
    var plane: [UInt8] { planes[0] }
    /// Mean and standard deviation of the visible pixels (for weighted prediction across fades).
    let mean: Double
    let deviation: Double

    /// Halves a `width` x `height` luma picture as libx264 does.
    public init(halving pixels: UnsafeBufferPointer<UInt8>, stride source: Int, width fullWidth: Int, height fullHeight: Int) {
        let pad = Self.pad
        let width = max(1, fullWidth / 2), height = max(1, fullHeight / 2), stride = width + 2 * pad
        self.width = width
        self.height = height
        self.stride = stride
        let base = pixels.baseAddress!
        var planes = [[UInt8]](repeating: [UInt8](repeating: 0, count: stride * (height + 2 * pad)), count: 4)
        var sum = 0, squares = 0
        // Each pixel the rounded mean of a 2x2 block, in libx264's order of rounding (down the column first);
        // past the picture's last row or column, that row or column again. A row pair's column means serve both
        // the whole and the half-right picture.
        var columns = [Int](repeating: 0, count: fullWidth + 2)
        for dy in 0..<2 {
            for y in 0..<height {
                let r0 = base + min(2 * y + dy, fullHeight - 1) * source, r1 = base + min(2 * y + dy + 1, fullHeight - 1) * source
                for c in 0..<fullWidth { columns[c] = (Int(r0[c]) + Int(r1[c]) + 1) >> 1 }
                columns[fullWidth] = columns[fullWidth - 1]
                columns[fullWidth + 1] = columns[fullWidth - 1]
                for dx in 0..<2 {
                    planes[2 * dy + dx].withUnsafeMutableBufferPointer { plane in
                        let row = plane.baseAddress! + (y + pad) * stride + pad
                        for x in 0..<width { row[x] = UInt8((columns[2 * x + dx] + columns[2 * x + dx + 1] + 1) >> 1) }
                        // Edges repeated left and right.
                        for x in 0..<pad {
                            row[-pad + x] = row[0]
                            row[width + x] = row[width - 1]
                        }
                    }
                }
            }
        }
        for k in 0..<4 {
            planes[k].withUnsafeMutableBufferPointer { plane in
                let first = plane.baseAddress! + pad * stride, last = plane.baseAddress! + (height + pad - 1) * stride
                for y in 0..<pad {
                    (plane.baseAddress! + y * stride).update(from: first, count: stride)
                    (plane.baseAddress! + (height + pad + y) * stride).update(from: last, count: stride)
                }
            }
        }
        for y in 0..<height {
            for x in 0..<width {
                let v = Int(planes[0][(y + pad) * stride + x + pad])
                sum += v
                squares += v * v
            }
        }
        let n = Double(width * height)
        mean = Double(sum) / n
        deviation = max(0, Double(squares) / n - mean * mean).squareRoot()
        self.planes = planes
    }

    /// `other` under H.264 weighted prediction: each pixel times `scale`/128, rounded, plus `offset`.
    init(weighting other: LowresPicture, scale: Int, offset: Int) {
        width = other.width
        height = other.height
        stride = other.stride
        let table = (0..<256).map { UInt8(clamping: (($0 * scale + 64) >> 7) + offset) }
        planes = other.planes.map { $0.map { table[Int($0)] } }
        mean = other.mean * Double(scale) / 128 + Double(offset)
        deviation = other.deviation * Double(scale) / 128
    }

    var blocksWide: Int { (width + 7) / 8 }
    var blocksHigh: Int { (height + 7) / 8 }

    /// Whether block (x, y) counts in the frame's cost: libx264 leaves out the picture's edge blocks.
    func scored(_ x: Int, _ y: Int) -> Bool {
        (x > 0 && x < blocksWide - 1 && y > 0 && y < blocksHigh - 1) || blocksWide <= 2 || blocksHigh <= 2
    }
}

/// libx264's scene-cut test compares two lookahead estimates of a frame: what it costs coded alone (each 8x8
/// block of the half-size picture predicted from its neighbours, in SATD) and what it costs predicted from
/// the frame before (motion search per block, the cheaper of the two per block). This is an estimate of
/// those estimates: the same picture size, block size, cost measure and penalties, a simpler search.
public enum LookaheadCost {
    /// What libx264 adds to an intra block's cost in the lookahead (5 λ at its lookahead quantiser, λ = 1).
    static let intraPenalty: Int32 = 5

    /// Each block's intra cost, in raster order.
    public static func intra(_ picture: LowresPicture) -> [Int32] {
        var costs = [Int32](repeating: 0, count: picture.blocksWide * picture.blocksHigh)
        picture.plane.withUnsafeBufferPointer { plane in
            let base = plane.baseAddress! + LowresPicture.pad * picture.stride + LowresPicture.pad
            var prediction = [UInt8](repeating: 0, count: 64)
            prediction.withUnsafeMutableBufferPointer { pred in
                for by in 0..<picture.blocksHigh {
                    for bx in 0..<picture.blocksWide {
                        let origin = base + by * 8 * picture.stride + bx * 8
                        costs[by * picture.blocksWide + bx] = bestIntra(origin, picture.stride, pred.baseAddress!) + intraPenalty
                    }
                }
            }
        }
        return costs
    }

    /// The sum of the scored blocks' intra costs.
    public static func frameCost(intra: [Int32], of picture: LowresPicture) -> Int {
        var total = 0
        for by in 0..<picture.blocksHigh {
            for bx in 0..<picture.blocksWide where picture.scored(bx, by) {
                total += Int(intra[by * picture.blocksWide + bx])
            }
        }
        return total
    }

    /// The frame's cost predicted from `reference` (the cheaper of inter and intra per block, scored blocks
    /// summed), from a reference with its brightness and contrast matched first when that predicts better,
    /// as libx264's weighted prediction does across fades.
    public static func frameCost(_ picture: LowresPicture, intra: [Int32], from reference: LowresPicture) -> Int {
        let reference = weighted(reference, toPredict: picture)
        let wide = picture.blocksWide, high = picture.blocksHigh
        var vectors = [(x: Int, y: Int)](repeating: (0, 0), count: wide * high)
        var total = 0
        let planes = reference.planes
        picture.plane.withUnsafeBufferPointer { current in
            planes[0].withUnsafeBufferPointer { p0 in planes[1].withUnsafeBufferPointer { p1 in
            planes[2].withUnsafeBufferPointer { p2 in planes[3].withUnsafeBufferPointer { p3 in
                let offset = LowresPicture.pad * picture.stride + LowresPicture.pad
                var search = MotionSearch(current: current.baseAddress! + offset,
                                          references: [p0, p1, p2, p3].map { $0.baseAddress! + offset },
                                          stride: picture.stride, blocksWide: wide, blocksHigh: high)
                // libx264 goes through the blocks backwards, predicting from those right of and below each.
                var candidates: [(x: Int, y: Int)] = []
                candidates.reserveCapacity(4)
                for by in stride(from: high - 1, through: 0, by: -1) {
                    for bx in stride(from: wide - 1, through: 0, by: -1) {
                        candidates.removeAll(keepingCapacity: true)
                        if bx < wide - 1 { candidates.append(vectors[by * wide + bx + 1]) }
                        if by < high - 1 {
                            candidates.append(vectors[(by + 1) * wide + bx])
                            if bx > 0 { candidates.append(vectors[(by + 1) * wide + bx - 1]) }
                            if bx < wide - 1 { candidates.append(vectors[(by + 1) * wide + bx + 1]) }
                        }
                        let (cost, vector) = search.best(blockX: bx, blockY: by, candidates: candidates)
                        vectors[by * wide + bx] = vector
                        if picture.scored(bx, by) { total += Int(min(cost, intra[by * wide + bx])) }
                    }
                }
            } } } }
        }
        return total
    }

    /// `reference` weighted to predict `picture` (a scale from the pictures' deviations and an offset from
    /// their means, in H.264's terms: scale in 128ths, offset within ±128), when that lowers the cost of
    /// predicting it without motion by more than 0.2 %, as libx264's lookahead weighs; else `reference`.
    static func weighted(_ reference: LowresPicture, toPredict picture: LowresPicture) -> LowresPicture {
        guard reference.deviation > 0 else { return reference }
        let guess = picture.deviation / reference.deviation
        guard abs(reference.mean - picture.mean) >= 0.5 || abs(1 - guess) >= 1.0 / 128 else { return reference }
        let scale = Int((guess * 128).rounded())
        let offset = min(127, max(-128, Int(picture.mean - reference.mean * Double(scale) / 128 + 0.5)))
        guard scale != 128 || offset != 0 else { return reference }
        let candidate = LowresPicture(weighting: reference, scale: scale, offset: offset)
        return Double(stillCost(picture, candidate)) < 0.998 * Double(stillCost(picture, reference)) ? candidate : reference
    }

    /// SATD of every 8x8 block against the same block of `reference`.
    static func stillCost(_ picture: LowresPicture, _ reference: LowresPicture) -> Int {
        var total = 0
        picture.plane.withUnsafeBufferPointer { current in
            reference.plane.withUnsafeBufferPointer { past in
                let offset = LowresPicture.pad * picture.stride + LowresPicture.pad
                for by in 0..<picture.blocksHigh {
                    for bx in 0..<picture.blocksWide {
                        let k = offset + by * 8 * picture.stride + bx * 8
                        total += Int(satd(current.baseAddress! + k, picture.stride, past.baseAddress! + k, picture.stride))
                    }
                }
            }
        }
        return total
    }

    /// The cheapest of DC, horizontal, vertical and plane prediction of the 8x8 block at `origin`, from the
    /// source pixels above and to its left, in SATD.
    static func bestIntra(_ origin: UnsafePointer<UInt8>, _ stride: Int, _ pred: UnsafeMutablePointer<UInt8>) -> Int32 {
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: 16 + 52) { edges in
            bestIntra(origin, stride, pred, top: edges.baseAddress!, left: edges.baseAddress! + 8, scratch: edges.baseAddress! + 16)
        }
    }

    static func bestIntra(_ origin: UnsafePointer<UInt8>, _ stride: Int, _ pred: UnsafeMutablePointer<UInt8>,
                          top: UnsafeMutablePointer<Int32>, left: UnsafeMutablePointer<Int32>, scratch: UnsafeMutablePointer<Int32>) -> Int32 {
        for i in 0..<8 {
            top[i] = Int32(origin[i - stride])
            left[i] = Int32(origin[i * stride - 1])
        }
        let corner = Int32(origin[-stride - 1])
        var best = Int32.max
        // DC per 4x4 quadrant, as libx264 predicts an 8x8 chroma block.
        let t0 = top[0] + top[1] + top[2] + top[3], t1 = top[4] + top[5] + top[6] + top[7]
        let l0 = left[0] + left[1] + left[2] + left[3], l1 = left[4] + left[5] + left[6] + left[7]
        let dc: [Int32] = [(t0 + l0 + 4) >> 3, (t1 + 2) >> 2, (l1 + 2) >> 2, (t1 + l1 + 4) >> 3]
        for y in 0..<8 { for x in 0..<8 { pred[y * 8 + x] = UInt8(dc[(y / 4) * 2 + x / 4]) } }
        best = min(best, satd(origin, stride, pred, 8))
        for y in 0..<8 { for x in 0..<8 { pred[y * 8 + x] = UInt8(left[y]) } }
        best = min(best, satd(origin, stride, pred, 8))
        for y in 0..<8 { for x in 0..<8 { pred[y * 8 + x] = UInt8(top[x]) } }
        best = min(best, satd(origin, stride, pred, 8))
        // Plane.
        var h: Int32 = 0, v: Int32 = 0
        for i in 0..<4 {
            h += Int32(i + 1) * (top[4 + i] - (i == 3 ? corner : top[2 - i]))
            v += Int32(i + 1) * (left[4 + i] - (i == 3 ? corner : left[2 - i]))
        }
        let b = (17 * h + 16) >> 5, c = (17 * v + 16) >> 5, a = 16 * (left[7] + top[7])
        for y in 0..<8 {
            for x in 0..<8 {
                pred[y * 8 + x] = UInt8(min(255, max(0, (a + b * Int32(x - 3) + c * Int32(y - 3) + 16) >> 5)))
            }
        }
        best = min(best, satd(origin, stride, pred, 8))
        return min(best, bestDirectional(origin, stride, pred, scratch))
    }

    /// The cheapest of H.264's six diagonal 8x8 luma predictions, from edges smoothed as H.264 smooths them
    /// (libx264's lookahead tries these too when its subpixel refinement is above 1, as at every preset from
    /// veryfast on).
    static func bestDirectional(_ origin: UnsafePointer<UInt8>, _ stride: Int, _ pred: UnsafeMutablePointer<UInt8>,
                                _ scratch: UnsafeMutablePointer<Int32>) -> Int32 {
        // Raw edges: t[0...16] is the corner then 16 pixels above, l[0...8] the corner then 8 to the left.
        let rawTop = scratch, rawLeft = scratch + 17
        rawTop[0] = Int32(origin[-stride - 1])
        rawLeft[0] = rawTop[0]
        for i in 0..<16 { rawTop[i + 1] = Int32(origin[i - stride]) }
        for i in 0..<8 { rawLeft[i + 1] = Int32(origin[i * stride - 1]) }
        // Smoothed: top[x + 1] is p'[x, -1] for x in -1...15, left[y + 1] is p'[-1, y] for y in -1...7.
        let top = scratch + 26, left = scratch + 43
        let corner = (rawTop[1] + 2 * rawTop[0] + rawLeft[1] + 2) >> 2
        top[0] = corner
        left[0] = corner
        for x in 0..<16 {
            top[x + 1] = x == 15 ? (rawTop[15] + 3 * rawTop[16] + 2) >> 2 : (rawTop[x] + 2 * rawTop[x + 1] + rawTop[x + 2] + 2) >> 2
        }
        for y in 0..<8 {
            left[y + 1] = y == 7 ? (rawLeft[7] + 3 * rawLeft[8] + 2) >> 2 : (rawLeft[y] + 2 * rawLeft[y + 1] + rawLeft[y + 2] + 2) >> 2
        }
        func t(_ x: Int) -> Int32 { top[x + 1] }
        func l(_ y: Int) -> Int32 { left[y + 1] }
        func three(_ a: Int32, _ b: Int32, _ c: Int32) -> Int32 { (a + 2 * b + c + 2) >> 2 }
        func two(_ a: Int32, _ b: Int32) -> Int32 { (a + b + 1) >> 1 }
        var best = Int32.max
        func fill(_ value: (Int, Int) -> Int32) {
            for y in 0..<8 { for x in 0..<8 { pred[y * 8 + x] = UInt8(value(x, y)) } }
            best = min(best, satd(origin, stride, pred, 8))
        }
        // Diagonal down-left.
        fill { x, y in x == 7 && y == 7 ? (t(14) + 3 * t(15) + 2) >> 2 : three(t(x + y), t(x + y + 1), t(x + y + 2)) }
        // Diagonal down-right.
        fill { x, y in
            x > y ? three(t(x - y - 2), t(x - y - 1), t(x - y)) : x < y ? three(l(y - x - 2), l(y - x - 1), l(y - x)) : three(t(0), t(-1), l(0))
        }
        // Vertical-right.
        fill { x, y in
            let z = 2 * x - y
            return z >= 0 && z % 2 == 0 ? two(t(x - (y >> 1) - 1), t(x - (y >> 1)))
                : z > 0 ? three(t(x - (y >> 1) - 2), t(x - (y >> 1) - 1), t(x - (y >> 1)))
                : z == -1 ? three(l(0), t(-1), t(0)) : three(l(y - 2 * x - 1), l(y - 2 * x - 2), l(y - 2 * x - 3))
        }
        // Horizontal-down.
        fill { x, y in
            let z = 2 * y - x
            return z >= 0 && z % 2 == 0 ? two(l(y - (x >> 1) - 1), l(y - (x >> 1)))
                : z > 0 ? three(l(y - (x >> 1) - 2), l(y - (x >> 1) - 1), l(y - (x >> 1)))
                : z == -1 ? three(l(0), t(-1), t(0)) : three(t(x - 2 * y - 1), t(x - 2 * y - 2), t(x - 2 * y - 3))
        }
        // Vertical-left.
        fill { x, y in
            y % 2 == 0 ? two(t(x + (y >> 1)), t(x + (y >> 1) + 1)) : three(t(x + (y >> 1)), t(x + (y >> 1) + 1), t(x + (y >> 1) + 2))
        }
        // Horizontal-up.
        fill { x, y in
            let z = x + 2 * y
            return z > 13 ? l(7) : z == 13 ? (l(6) + 3 * l(7) + 2) >> 2
                : z % 2 == 0 ? two(l(y + (x >> 1)), l(y + (x >> 1) + 1)) : three(l(y + (x >> 1)), l(y + (x >> 1) + 1), l(y + (x >> 1) + 2))
        }
        return best
    }

    /// Sum of absolute 4x4 Hadamard coefficients of (block − prediction), halved, over the four 4x4 blocks.
    /// The coefficients' order does not matter to the sum, so each row's two 4x4 halves are transformed side by
    /// side: first down the columns, then across by even and odd lanes.
    static func satd(_ origin: UnsafePointer<UInt8>, _ stride: Int, _ pred: UnsafePointer<UInt8>, _ predStride: Int) -> Int32 {
        var total: Int32 = 0
        for half in 0..<2 {
            @inline(__always) func row(_ y: Int) -> SIMD8<Int32> {
                SIMD8<Int32>(truncatingIfNeeded: load8(origin + (4 * half + y) * stride))
                    &- SIMD8<Int32>(truncatingIfNeeded: load8(pred + (4 * half + y) * predStride))
            }
            let r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3)
            let a0 = r0 &+ r1, a1 = r0 &- r1, a2 = r2 &+ r3, a3 = r2 &- r3
            let sums = across(a0 &+ a2) &+ across(a1 &+ a3) &+ across(a0 &- a2) &+ across(a1 &- a3)
            total += (sums[0] >> 1) + (sums[1] >> 1)
        }
        return total
    }

    /// The absolute coefficients of one row of two 4-point transforms side by side, summed per transform.
    @inline(__always)
    static func across(_ row: SIMD8<Int32>) -> SIMD2<Int32> {
        // Lanes of `s` and `d`: the left transform's two pairs, then the right one's.
        let s = row.evenHalf &+ row.oddHalf, d = row.evenHalf &- row.oddHalf
        return magnitude(s.evenHalf &+ s.oddHalf) &+ magnitude(s.evenHalf &- s.oddHalf)
            &+ magnitude(d.evenHalf &+ d.oddHalf) &+ magnitude(d.evenHalf &- d.oddHalf)
    }

    /// SAD of an 8x8 block against another.
    static func sad(_ a: UnsafePointer<UInt8>, _ strideA: Int, _ b: UnsafePointer<UInt8>, _ strideB: Int) -> Int32 {
        var sum = SIMD8<UInt16>()
        for row in 0..<8 {
            let x = load8(a + row * strideA), y = load8(b + row * strideB)
            sum &+= SIMD8<UInt16>(truncatingIfNeeded: pointwiseMax(x, y) &- pointwiseMin(x, y))
        }
        return Int32(sum.wrappedSum())
    }

    @inline(__always)
    static func load8(_ p: UnsafePointer<UInt8>) -> SIMD8<UInt8> { UnsafeRawPointer(p).loadUnaligned(as: SIMD8<UInt8>.self) }

    @inline(__always)
    static func magnitude<V: SIMD>(_ v: V) -> V where V.Scalar == Int32 { v.replacing(with: 0 &- v, where: v .< 0) }
}

/// libx264's lookahead motion search for one 8x8 block of a half-size picture: the predicted vector and
/// the candidates at their own (quarter-pixel) positions, then a hexagon search at whole pixels from the best,
/// all by SAD; one round of half-pixel steps by SAD, the SATD there, one round of quarter-pixel steps by
/// SATD. Each vector costs its bits at λ = 1, as libx264 counts them.
struct MotionSearch {
    let current: UnsafePointer<UInt8>
    /// Whole, half-right, half-down and half-diagonal pixels.
    let references: [UnsafePointer<UInt8>]
    let stride: Int
    let blocksWide: Int
    let blocksHigh: Int
    /// The interpolated block being compared.
    var buffer = [UInt8](repeating: 0, count: 64)
    static let hexagon = [(-2, 0), (-1, 2), (1, 2), (2, 0), (1, -2), (-1, -2)]
    static let square = [(0, -1), (0, 1), (-1, 0), (1, 0), (-1, -1), (-1, 1), (1, -1), (1, 1)]
    static let diamond = [(0, -1), (0, 1), (-1, 0), (1, 0)]
    /// Which half-pixel picture the first and second source of each quarter-pixel position come from.
    static let firstPlane = [0, 1, 1, 1, 0, 1, 1, 1, 2, 3, 3, 3, 0, 1, 1, 1]
    static let secondPlane = [0, 0, 1, 0, 2, 2, 3, 2, 2, 2, 3, 2, 2, 2, 3, 2]
    /// libx264's vector cost at λ = 1: 2 log2(|d| + 1) + 1.718 per component in quarter pixels, rounded.
    static let vectorBits: [Int32] = (0...2048).map { (d: Int) -> Int32 in
        guard d > 0 else { return 1 }
        let bits: Double = 2 * log2(Double(d + 1)) + 1.718
        return Int32((bits + 0.5).rounded(.down))
    }

    /// The block's cost and vector (quarter pixels), for block (blockX, blockY) in block units.
    mutating func best(blockX: Int, blockY: Int, candidates: [(x: Int, y: Int)]) -> (Int32, (x: Int, y: Int)) {
        let block = current + blockY * 8 * stride + blockX * 8
        // Whole-pixel vectors keep the block within 4 pixels of the picture, quarter pixels within 12.
        let lowX = -8 * blockX - 4, highX = 8 * (blocksWide - blockX - 1) + 4
        let lowY = -8 * blockY - 4, highY = 8 * (blocksHigh - blockY - 1) + 4
        func clampQ(_ v: (x: Int, y: Int)) -> (x: Int, y: Int) {
            (min(max(v.x, 4 * (lowX - 8)), 4 * (highX + 8)), min(max(v.y, 4 * (lowY - 8)), 4 * (highY + 8)))
        }
        // The median of the first three candidates, missing ones zero; the first alone when there is one.
        let zero: (x: Int, y: Int) = (0, 0)
        let c0 = candidates.first ?? zero, c1 = candidates.count > 1 ? candidates[1] : zero
        let c2 = candidates.count > 2 ? candidates[2] : zero
        let predicted = candidates.count <= 1 ? c0 : (x: median(c0.x, c1.x, c2.x), y: median(c0.y, c1.y, c2.y))
        func bits(_ x: Int, _ y: Int) -> Int32 {
            Self.vectorBits[min(2048, abs(x - predicted.x))] + Self.vectorBits[min(2048, abs(y - predicted.y))]
        }
        // Near-zero residual without motion: no search.
        if predicted == (0, 0) {
            let still = interpolate(block, 0, 0, satd: true)
            if still < 64 { return (still, (0, 0)) }
        }
        func whole(_ x: Int, _ y: Int) -> Int32 { sadWhole(block, x, y) + bits(4 * x, 4 * y) }
        // The predictors at their own positions.
        var bestPredicted = clampQ(predicted)
        var predictedCost = interpolate(block, bestPredicted.x, bestPredicted.y, satd: false) + bits(bestPredicted.x, bestPredicted.y)
        for raw in candidates {
            let candidate = clampQ(raw)
            guard candidate != (0, 0), candidate != bestPredicted else { continue }
            let cost = interpolate(block, candidate.x, candidate.y, satd: false) + bits(candidate.x, candidate.y)
            if cost < predictedCost { predictedCost = cost; bestPredicted = candidate }
        }
        var bx = min(max((bestPredicted.x + 2) >> 2, lowX), highX), by = min(max((bestPredicted.y + 2) >> 2, lowY), highY)
        var cost = (bestPredicted.x | bestPredicted.y) & 3 != 0 ? whole(bx, by) : predictedCost
        if bx != 0 || by != 0 {
            let zero = whole(0, 0)
            if zero < cost { cost = zero; bx = 0; by = 0 }
        }
        // Hexagon, radius 2, then the eight neighbours.
        for _ in 0..<8 {
            var moved = false
            let (ox, oy) = (bx, by)
            for (dx, dy) in Self.hexagon {
                let x = ox + dx, y = oy + dy
                guard x >= lowX, x <= highX, y >= lowY, y <= highY else { continue }
                let c = whole(x, y)
                if c < cost { cost = c; bx = x; by = y; moved = true }
            }
            if !moved { break }
        }
        let (ox, oy) = (bx, by)
        for (dx, dy) in Self.square {
            let x = ox + dx, y = oy + dy
            guard x >= lowX, x <= highX, y >= lowY, y <= highY else { continue }
            let c = whole(x, y)
            if c < cost { cost = c; bx = x; by = y }
        }
        var (qx, qy) = predictedCost < cost ? bestPredicted : (4 * bx, 4 * by)
        cost = min(cost, predictedCost)
        // One round of half pixels by SAD, then the SATD, one round of quarter pixels by SATD.
        let (hx, hy) = (qx, qy)
        for (dx, dy) in Self.diamond {
            let c = interpolate(block, hx + 2 * dx, hy + 2 * dy, satd: false) + bits(hx + 2 * dx, hy + 2 * dy)
            if c < cost { cost = c; (qx, qy) = (hx + 2 * dx, hy + 2 * dy) }
        }
        cost = interpolate(block, qx, qy, satd: true) + bits(qx, qy)
        let (fx, fy) = (qx, qy)
        for (dx, dy) in Self.diamond {
            let c = interpolate(block, fx + dx, fy + dy, satd: true) + bits(fx + dx, fy + dy)
            if c < cost { cost = c; (qx, qy) = (fx + dx, fy + dy) }
        }
        // libx264 takes the zero vector's bits back, and charges a moved block 5 λ.
        cost -= Self.vectorBits[0]
        if qx != 0 || qy != 0 { cost += 5 }
        return (cost, (qx, qy))
    }

    func median(_ a: Int, _ b: Int, _ c: Int) -> Int { max(min(a, b), min(max(a, b), c)) }

    /// SAD against whole-pixel vector (x, y).
    func sadWhole(_ block: UnsafePointer<UInt8>, _ x: Int, _ y: Int) -> Int32 {
        LookaheadCost.sad(block, stride, references[0] + (block - current) + y * stride + x, stride)
    }

    /// SAD or SATD against quarter-pixel vector (x, y): half pixels from their pictures, quarter pixels the
    /// rounded mean of the two nearest.
    mutating func interpolate(_ block: UnsafePointer<UInt8>, _ x: Int, _ y: Int, satd: Bool) -> Int32 {
        let index = ((y & 3) << 2) + (x & 3)
        let offset = (block - current) + (y >> 2) * stride + (x >> 2)
        let a = references[Self.firstPlane[index]] + offset + ((y & 3) == 3 ? stride : 0)
        let stride = stride
        guard index & 5 != 0 else {
            return satd ? LookaheadCost.satd(block, stride, a, stride) : LookaheadCost.sad(block, stride, a, stride)
        }
        let b = references[Self.secondPlane[index]] + offset + ((x & 3) == 3 ? 1 : 0)
        return buffer.withUnsafeMutableBufferPointer { pred in
            for row in 0..<8 {
                let p = SIMD8<UInt16>(truncatingIfNeeded: LookaheadCost.load8(a + row * stride))
                    &+ SIMD8<UInt16>(truncatingIfNeeded: LookaheadCost.load8(b + row * stride)) &+ 1
                UnsafeMutableRawPointer(pred.baseAddress! + row * 8).storeBytes(of: SIMD8<UInt8>(truncatingIfNeeded: p &>> 1), as: SIMD8<UInt8>.self)
            }
            return satd ? LookaheadCost.satd(block, stride, pred.baseAddress!, 8) : LookaheadCost.sad(block, stride, pred.baseAddress!, 8)
        }
    }
}
