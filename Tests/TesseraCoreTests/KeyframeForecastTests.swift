import Testing
@testable import TesseraCore

/// Closed GOPs starting at the given display positions (the first at 0), "I P B B ..." within each.
func streamWithKeyframes(at starts: [Int], frames: Int, bframes: Int = 2, size: (Int) -> Int = { _ in 100 }) -> [PacketInfo] {
    var packets: [PacketInfo] = []
    let bounds = starts + [frames]
    for (start, end) in zip(bounds, bounds.dropFirst()) {
        let gop = SyntheticStream.closedGOP(frames: end - start, gop: end - start, bframes: bframes)
        for p in gop {
            var q = p
            q.index = packets.count
            q.pts = p.pts.map { $0 + Int64(start) }
            q.dts = p.dts.map { $0 + Int64(start) }
            q.size = q.randomAccess == .none ? 100 : size(start)
            packets.append(q)
        }
    }
    return packets
}

@Suite struct KeyframeForecastTests {
    @Test func sceneChangeKeyframesAreReadFromIrregularIntervals() {
        // An x264 source: keyframes at its scene cuts, no interval repeated.
        #expect(KeyframeForecast.sceneCuts(randomAccessPoints: [0, 30, 76, 137, 187, 242], keyint: 250) == [30, 76, 137, 187, 242])
        // Scenes of exactly 6 s are scene cuts too: the longest interval (249) is not repeated.
        #expect(KeyframeForecast.sceneCuts(randomAccessPoints: [0, 180, 360, 540, 789, 863], keyint: 250) == [180, 360, 540, 789, 863])
        // A 60-frame cadence with scene cuts between: the cadence's keyframes are not scene cuts.
        #expect(KeyframeForecast.sceneCuts(randomAccessPoints: [0, 60, 120, 150, 210, 270, 300, 360], keyint: 250) == [150, 300])
    }

    @Test func aFixedCadenceOrEveryFrameSaysNothing() {
        #expect(KeyframeForecast.sceneCuts(randomAccessPoints: Array(stride(from: 0, to: 1440, by: 48)), keyint: 250).isEmpty)
        #expect(KeyframeForecast.sceneCuts(randomAccessPoints: Array(0..<100), keyint: 250).isEmpty)
        #expect(KeyframeForecast.sceneCuts(randomAccessPoints: [0], keyint: 250).isEmpty)
        // A cadence that is the output's own keyint is where the output has its IDR frames too.
        #expect(KeyframeForecast.sceneCuts(randomAccessPoints: [0, 250, 500, 750], keyint: 250) == [250, 500, 750])
    }

    @Test func keyframesFollowX264sCadence() {
        // No scene cut: every keyint frames.
        #expect(KeyframeForecast.keyframes(frames: 1800, sceneCuts: [], keyint: 250, minimumInterval: 25)
                == [0, 250, 500, 750, 1000, 1250, 1500, 1750])
        // A scene cut restarts the cadence; one within keyint-min of the last IDR is an I-frame, not an IDR.
        #expect(KeyframeForecast.keyframes(frames: 700, sceneCuts: [10, 30, 76, 137], keyint: 250, minimumInterval: 25)
                == [0, 30, 76, 137, 387, 637])
        // The cadence runs on through a long scene; a cut on the cadence is one IDR.
        #expect(KeyframeForecast.keyframes(frames: 900, sceneCuts: [600], keyint: 250, minimumInterval: 25)
                == [0, 250, 500, 600, 850])
        #expect(KeyframeForecast.keyframes(frames: 600, sceneCuts: [250], keyint: 250, minimumInterval: 25) == [0, 250, 500])
        // ultrafast: no scene detection.
        #expect(KeyframeForecast.keyframes(frames: 600, sceneCuts: [100], keyint: 250, minimumInterval: 25, detectsScenes: false)
                == [0, 250, 500])
    }

    @Test func plansCutOnlyAtForecastKeyframes() throws {
        let scenes = [0, 30, 76, 137, 187, 242]
        let packets = streamWithKeyframes(at: scenes, frames: 250)
        let planner = try CutPlanner(packets: packets, timeBase: Rational(1, 25), frameRate: Rational(25, 1))
        var options = PlanOptions(segmentSeconds: nil, keyint: 250, minimumSegments: 4)
        options.encoders = 2
        let plan = planner.plan(options)
        checkCoverage(plan, packets)
        #expect(plan.forecastKeyframes == scenes.map(Int64.init))
        #expect(plan.segments.count >= 2)
        #expect(plan.segments.allSatisfy { scenes.contains(Int($0.startPTS)) })
        #expect(plan.totalPreRollPackets == 0)
    }

    @Test func aShortClipWithOneKeyframeIsOneSegment() throws {
        // 5 s with one keyframe: any cut is an IDR a whole-file encode would not have, and costs more
        // than the budget (a big keyframe against small frames).
        let packets = streamWithKeyframes(at: [0], frames: 125, size: { _ in 2000 })
        let planner = try CutPlanner(packets: packets, timeBase: Rational(1, 25), frameRate: Rational(25, 1))
        var options = PlanOptions(segmentSeconds: nil, keyint: 250, minimumSegments: 4)
        options.encoders = 2
        #expect(planner.estimatedCostOfAnExtraCut > options.extraCutBudget)
        #expect(planner.plan(options).segments.count == 1)
        // Asked for 1 s segments, it cuts anyway.
        options.segmentSeconds = 1
        #expect(planner.plan(options).segments.count > 1)
    }

    @Test func aLongSceneIsCutOnTheCadenceAndExtraCutsOnlyWhenTheyPay() throws {
        // 60 s at 30 fps, a keyframe every 2 s whatever the content: cuts every 250 frames (with pre-roll).
        let packets = streamWithKeyframes(at: Array(stride(from: 0, to: 1800, by: 60)), frames: 1800)
        let planner = try CutPlanner(packets: packets, timeBase: Rational(1, 30), frameRate: Rational(30, 1))
        var options = PlanOptions(segmentSeconds: nil, keyint: 250, minimumSegments: 4)
        options.encoders = 2
        options.costOfAnExtraCut = 0.01
        let free = planner.plan(options)
        checkCoverage(free, packets)
        #expect(free.segments.allSatisfy { $0.startPTS % 250 == 0 })
        #expect(free.forecastKeyframes == [0, 250, 500, 750, 1000, 1250, 1500, 1750])
        let freeSpan = CutPlanner.makespan(free.segments.map(\.frameCount), encoders: 2)
        // When an IDR costs little, cuts elsewhere balance the encoders, within the budget.
        options.costOfAnExtraCut = 0.001
        let balanced = planner.plan(options)
        checkCoverage(balanced, packets)
        let extra = balanced.segments.filter { $0.startPTS % 250 != 0 }.count
        #expect(extra >= 1 && extra <= 5)
        #expect(CutPlanner.makespan(balanced.segments.map(\.frameCount), encoders: 2) < freeSpan)
    }

    @Test func anExtraCutGoesWhereTheEncodersShareEvenlyPreRollCounted() throws {
        // 5 s at 30 fps, source keyframes every 2 s, one forecast keyframe: the cut that balances two
        // encoders is at 75 (15 frames of pre-roll from 60), not at the clean cut 60 (60 + 90 frames).
        let packets = streamWithKeyframes(at: [0, 60, 120], frames: 150, bframes: 0)
        let planner = try CutPlanner(packets: packets, timeBase: Rational(1, 30), frameRate: Rational(30, 1))
        var options = PlanOptions(segmentSeconds: nil, keyint: 250, minimumSegments: 4)
        options.encoders = 2
        options.costOfAnExtraCut = 0.001
        let plan = planner.plan(options)
        checkCoverage(plan, packets)
        #expect(plan.segments.map(\.frameCount) == [75, 75])
        #expect(plan.totalPreRollPackets == 15)
        // When decoding costs as much as encoding, a clean cut near the middle wins.
        options.preRollWeight = 2
        #expect(planner.plan(options).segments.map(\.frameCount) == [60, 90])
        // The queue's last job, cut anywhere into equal pieces, balances the same way.
        options.preRollWeight = 0.2
        options.segmentation = Segmentation(count: 2, anywhere: true)
        #expect(planner.plan(options).segments.map(\.frameCount) == [75, 75])
        options.segmentation = Segmentation(count: 2)
        #expect(planner.plan(options).segments.count == 1, "at forecast keyframes only: there is none to cut at")
    }

    @Test func scenesFoundByDecodingJoinTheForecast() throws {
        // A keyframe every 48 frames whatever the content: every pair is examined.
        let cadence = Array(stride(from: 0, to: 1440, by: 48))
        let packets = streamWithKeyframes(at: cadence, frames: 1440)
        let planner = try CutPlanner(packets: packets, timeBase: Rational(1, 30), frameRate: Rational(30, 1))
        var options = PlanOptions(segmentSeconds: nil, keyint: 250)
        #expect(planner.sceneAnalysisIntervals(options) == zip(cadence, cadence.dropFirst()).map { $0...$1 })
        options.decodedScenes = DecodedScenes(examined: planner.sceneAnalysisIntervals(options), cuts: [180, 360, 540])
        #expect(planner.forecast(options).keyframes == [0, 180, 360, 540, 790, 1040, 1290])
        // Keyframes at scene changes: only the pairs nearly a keyint apart, where a keyframe may be a
        // cadence's or a weak scene change, are examined; what decoding finds there replaces them.
        let marked = [0, 30, 76, 290, 330]
        let told = try CutPlanner(packets: streamWithKeyframes(at: marked, frames: 400), timeBase: Rational(1, 25), frameRate: nil)
        options.decodedScenes = nil
        #expect(told.sceneAnalysisIntervals(options) == [76...290])
        options.decodedScenes = DecodedScenes(examined: [76...290], cuts: [200])
        #expect(told.forecast(options).sceneCuts == [30, 76, 200, 330])
        // A single keyframe: nothing to compare.
        let single = try CutPlanner(packets: streamWithKeyframes(at: [0], frames: 200), timeBase: Rational(1, 25), frameRate: nil)
        #expect(single.sceneAnalysisIntervals(options).isEmpty)
    }

    @Test func decodedScenesReplaceTheClaimsTheyExamined() {
        let found = DecodedScenes(examined: [100...300, 300...500], cuts: [250])
        #expect(found.correcting([50, 100, 300, 420, 600]) == [50, 100, 250, 600])
    }

    /// libx264's scene-cut test: a share of the intra cost that passes only as the bias grows with the GOP.
    @Test func aSceneCutNeedsLessChangeAsTheGOPGrows() {
        func replay(_ changes: [SceneChange], flashes: Bool = true) -> [Int] {
            KeyframeForecast.replay(frames: 600, changes: Dictionary(uniqueKeysWithValues: changes.map { ($0.frame, $0) }),
                                    keyint: 250, minimumInterval: 25, flashes: flashes).keyframes
        }
        // 0.75 of the intra cost: not 50 frames after an IDR (bias 0.13), but 200 frames after (0.33).
        #expect(replay([SceneChange(frame: 50, change: 0.75, skipping: 0.75)]) == [0, 250, 500])
        #expect(replay([SceneChange(frame: 200, change: 0.75, skipping: 0.75)]) == [0, 200, 450])
        // A certain change within the minimum interval is no IDR; the cadence runs on from the last one.
        #expect(replay([.certain(10), .certain(100)]) == [0, 100, 350])
    }

    @Test func flashesAndPassingScenesAreNoSceneCuts() {
        func replay(_ changes: [SceneChange], flashes: Bool = true) -> [Int] {
            KeyframeForecast.replay(frames: 300, changes: Dictionary(uniqueKeysWithValues: changes.map { ($0.frame, $0) }),
                                    keyint: 250, minimumInterval: 25, flashes: flashes).keyframes
        }
        // A one-frame flash at 100: the frame after it looks like the one before (skipping share low).
        let flash = [SceneChange(frame: 100, change: 1, skipping: 0.2), SceneChange(frame: 101, change: 1, skipping: 0.2)]
        #expect(replay(flash) == [0, 250])
        // Without B-frames libx264 does not look for flashes.
        #expect(replay(flash, flashes: false) == [0, 100])
        // A two-frame flash: its first frame is the IDR, the return to the picture comes too soon for another.
        let twoFrames = [SceneChange(frame: 100, change: 1, skipping: 1), SceneChange(frame: 102, change: 1, skipping: 1)]
        #expect(replay(twoFrames) == [0, 100])
        // A one-frame scene between two cuts: the frame after it is the cut.
        let passing = [SceneChange(frame: 100, change: 1, skipping: 1), SceneChange(frame: 101, change: 1, skipping: 1)]
        #expect(replay(passing) == [0, 101])
    }

    /// The lookahead estimate on pictures: a picture moved by a few pixels predicts well, another does not.
    @Test func lookaheadCostTellsAMoveFromACut() {
        let width = 128, height = 96
        func picture(_ value: (Int, Int) -> Int) -> LowresPicture {
            var pixels = [UInt8](repeating: 0, count: width * height)
            for y in 0..<height { for x in 0..<width { pixels[y * width + x] = UInt8(clamping: value(x, y)) } }
            return pixels.withUnsafeBufferPointer { LowresPicture(halving: $0, stride: width, width: width, height: height) }
        }
        func texture(_ x: Int, _ y: Int) -> Int { (x * 37 + y * 91 + (x * y) % 23) % 200 + 20 + ((x / 9 + y / 7) % 2) * 30 }
        let first = picture { texture($0, $1) }
        let moved = picture { texture($0 + 4, $1 + 2) }
        let other = picture { 128 + (($0 / 5 + $1 / 3) % 3) * 40 - ($0 * $1) % 17 }
        func share(_ picture: LowresPicture, from reference: LowresPicture) -> Double {
            let intra = LookaheadCost.intra(picture)
            return Double(LookaheadCost.frameCost(picture, intra: intra, from: reference)) / Double(LookaheadCost.frameCost(intra: intra, of: picture))
        }
        #expect(share(moved, from: first) < 0.3)
        #expect(share(other, from: first) > 0.9)
        // Flat: every block's cost is the intra penalty alone.
        let flat = picture { _, _ in 90 }
        #expect(LookaheadCost.intra(flat).allSatisfy { $0 == LookaheadCost.intraPenalty })
    }

    /// The vectorised SATD and SAD give the textbook sums: per 4x4 block the absolute 4-point Hadamard
    /// coefficients of the difference, halved and rounded down, and the absolute differences.
    @Test func satdAndSADAreTheScalarSums() {
        var generator = SystemRandomNumberGenerator()
        let stride = 24
        for trial in 0..<200 {
            let a = (0..<(stride * 8)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let b = (0..<(stride * 8)).map { k in trial % 2 == 0 ? UInt8.random(in: 0...255, using: &generator) : UInt8(clamping: Int(a[k]) + Int.random(in: -6...6)) }
            var satd: Int32 = 0, sad: Int32 = 0
            for q in 0..<4 {
                var d = [[Int32]](repeating: [Int32](repeating: 0, count: 4), count: 4)
                for y in 0..<4 { for x in 0..<4 {
                    let k = ((q >> 1) * 4 + y) * stride + (q & 1) * 4 + x
                    d[y][x] = Int32(a[k]) - Int32(b[k])
                    sad += abs(d[y][x])
                } }
                let h: [[Int32]] = [[1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1], [1, -1, -1, 1]]
                var sum: Int32 = 0
                for i in 0..<4 { for j in 0..<4 {
                    var c: Int32 = 0
                    for y in 0..<4 { for x in 0..<4 { c += h[i][y] * d[y][x] * h[j][x] } }
                    sum += abs(c)
                } }
                satd += sum >> 1
            }
            a.withUnsafeBufferPointer { pa in b.withUnsafeBufferPointer { pb in
                #expect(LookaheadCost.satd(pa.baseAddress!, stride, pb.baseAddress!, stride) == satd)
                #expect(LookaheadCost.sad(pa.baseAddress!, stride, pb.baseAddress!, stride) == sad)
            } }
        }
    }

    /// The half-size pictures are 2x2 means rounded as libx264 rounds them (down the column first), at whole and
    /// half-pixel offsets, the last row and column repeated past the edge; odd sizes too.
    @Test func halvingRoundsAsLibx264Does() {
        var generator = SystemRandomNumberGenerator()
        for (width, height) in [(37, 23), (64, 36), (18, 11)] {
            let stride = width + 3
            let pixels = (0..<(stride * height)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let picture = pixels.withUnsafeBufferPointer { LowresPicture(halving: $0, stride: stride, width: width, height: height) }
            for (k, (dx, dy)) in [(0, 0), (1, 0), (0, 1), (1, 1)].enumerated() {
                for y in 0..<(height / 2) {
                    for x in 0..<(width / 2) {
                        func at(_ c: Int, _ r: Int) -> Int { Int(pixels[min(r, height - 1) * stride + min(c, width - 1)]) }
                        let left = (at(2 * x + dx, 2 * y + dy) + at(2 * x + dx, 2 * y + dy + 1) + 1) >> 1
                        let right = (at(2 * x + dx + 1, 2 * y + dy) + at(2 * x + dx + 1, 2 * y + dy + 1) + 1) >> 1
                        let got = picture.planes[k][(y + LowresPicture.pad) * picture.stride + x + LowresPicture.pad]
                        #expect(Int(got) == (left + right + 1) >> 1, "plane \(k) at \(x),\(y) of \(width)x\(height)")
                    }
                }
            }
        }
    }
}
