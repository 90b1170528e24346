import Foundation
import Testing
import TesseraTestSupport

/// `--bitrate R` (two passes, the default) end to end through `tessera transcode` (embedded PostgreSQL,
/// coordinator, worker processes) against ffmpeg's own whole-file two-pass at the same bitrate and preset: the
/// file's video bitrate within ±2 % of the target, PSNR within 0.1 dB of ffmpeg's, and per-segment PSNR no more
/// spread than 1.2× ffmpeg's over the same frames, and less than one pass per segment's (`--passes 1`).
/// bench/bitrate.py measures the same figures.
@Suite(.serialized) struct TwoPassTests {
    static let dataDir: String = {
        atexit { _ = try? Tool.run(Tool.tesseraBinary, ["db", "stop", "--force", "--data-dir", TwoPassTests.dataDirPath]) }
        return dataDirPath
    }()
    static let dataDirPath = Fixtures.directory.appendingPathComponent("two-pass-db").path

    /// Real footage and the synthetic clip, each at two bitrates.
    static let cases: [(clip: String, kbps: Int)] = [("bikes", 400), ("bikes", 800), ("noisy", 500), ("noisy", 1000)]

    /// `tessera transcode` of `source` at `kbps` (veryfast, 2 workers, `extra` options); its JSON report.
    static func transcode(_ source: String, _ output: String, kbps: Int, _ extra: [String] = []) throws -> (run: Tool.Output, segments: [Int]) {
        let run = try Tool.run(Tool.tesseraBinary, ["transcode", source, "-o", output, "-y", "--preset", "veryfast", "--bitrate", "\(kbps)k",
                                                    "--audio", "none", "--workers", "2", "--data-dir", dataDir, "--json"] + extra)
        try #require(run.status == 0, "\(run.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(run.text.utf8)) as? [String: Any]
        return (run, try #require(report?["segmentFrames"] as? [Int]))
    }

    /// PSNR is compared at the same bitrate: where ffmpeg's file lands more than 1 % away from Tessera's, Tessera
    /// is run again at ffmpeg's achieved bitrate for the comparison.
    @Test(arguments: 0..<4)
    func twoPassHitsTheTargetWithFFmpegsQuality(_ n: Int) throws {
        let (clip, kbps) = Self.cases[n]
        let source = clip == "bikes" ? try RealFootage.bikes : try Fixtures.cleanThenNoisy()
        let ours = Fixtures.output("two-pass-tessera.mp4"), theirs = Fixtures.output("two-pass-ffmpeg.mp4")
        let onePass = Fixtures.output("two-pass-one-pass.mp4"), matched = Fixtures.output("two-pass-matched.mp4")
        let log = Fixtures.output("two-pass-ffmpeg")
        defer {
            for f in [ours, theirs, onePass, matched, log + "-0.log", log + "-0.log.mbtree"] { try? FileManager.default.removeItem(atPath: f) }
        }
        let (run, segmentFrames) = try Self.transcode(source, ours, kbps: kbps)
        #expect(run.stderr.contains("tessera: first pass") && run.stderr.contains("tessera: second pass"), "\(run.stderr)")
        let common = ["-i", source, "-an", "-c:v", "libx264", "-preset", "veryfast", "-b:v", "\(kbps)k", "-passlogfile", log]
        try Tool.ffmpeg(common + ["-pass", "1", "-f", "null", "-"])
        try Tool.ffmpeg(common + ["-pass", "2", theirs])
        // One pass per segment, over the same segments: the spread two passes are to narrow.
        _ = try Self.transcode(source, onePass, kbps: kbps, ["--passes", "1"])

        func rate(_ path: String) throws -> Double {
            let frames = try Tool.perFrameMSE(path, source).count
            return Double(try Tool.videoBytes(path) * 8) / (Double(frames) / 25)
        }
        func db(_ mse: ArraySlice<Double>) -> Double { 10 * log10(255 * 255 / max(mse.reduce(0, +) / Double(mse.count), 1e-10)) }
        func spread(_ mse: [Double]) -> Double {
            var psnr: [Double] = [], at = 0
            for frames in segmentFrames {
                psnr.append(db(mse[at..<(at + frames)]))
                at += frames
            }
            return (psnr.max() ?? 0) - (psnr.min() ?? 0)
        }
        let mseOurs = try Tool.perFrameMSE(ours, source), mseTheirs = try Tool.perFrameMSE(theirs, source)
        let mseOnePass = try Tool.perFrameMSE(onePass, source)
        try #require(mseOurs.count == mseTheirs.count && mseOurs.count == segmentFrames.reduce(0, +))
        let (rateOurs, rateTheirs) = (try rate(ours), try rate(theirs))
        let error = rateOurs / Double(kbps * 1000) - 1, errorTheirs = rateTheirs / Double(kbps * 1000) - 1
        let delta = db(mseOurs[...]) - db(mseTheirs[...])
        var deltaMatched = delta
        if abs(rateTheirs / rateOurs - 1) > 0.01 {
            _ = try Self.transcode(source, matched, kbps: Int((Double(kbps) * rateTheirs / rateOurs).rounded()))
            deltaMatched = db(try Tool.perFrameMSE(matched, source)[...]) - db(mseTheirs[...])
        }
        let spreadOurs = spread(mseOurs), spreadTheirs = spread(mseTheirs), spreadOnePass = spread(mseOnePass)
        #expect(segmentFrames.count >= 2)
        #expect(abs(error) <= 0.02, "bitrate off by \(error), ffmpeg's two-pass by \(errorTheirs)")
        #expect(abs(deltaMatched) <= 0.1)
        #expect(spreadOurs <= 1.2 * spreadTheirs + 0.05)
        #expect(spreadOurs < spreadOnePass)
    }

    /// The VBV of a stitched file as a decoder sees it, from ffprobe's packets in decode order: a buffer of
    /// `bufsize` bits starting `initial` full, filled at `maxrate` up to full, each frame taken out at its dts.
    /// Frames it underflows at, the lowest fullness after a frame, and the fullness each segment after the first
    /// finds at its start (fractions of the buffer; segments are closed GOPs of `segments` frames each).
    static func vbv(_ path: String, maxrate: Double, bufsize: Double, segments: [Int] = [],
                    initial: Double = 0.5) throws -> (underflows: Int, lowest: Double, joins: [Double]) {
        let text = try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "packet=size,dts_time", "-of", "json", path])
        let packets = try #require((try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["packets"] as? [[String: Any]])
        let starts = Set(segments.indices.dropFirst().map { segments[..<$0].reduce(0, +) })
        var fill = initial * bufsize, lowest = fill, underflows = 0, last: Double?, joins: [Double] = []
        for (n, packet) in packets.enumerated() {
            guard let size = (packet["size"] as? String).flatMap(Double.init), let dts = (packet["dts_time"] as? String).flatMap(Double.init) else {
                throw ToolError("packet \(packet)")
            }
            if let last { fill = min(fill + maxrate * (dts - last), bufsize) }
            if starts.contains(n) { joins.append(fill / bufsize) }
            fill -= size * 8
            if fill < 0 { underflows += 1 }
            lowest = min(lowest, fill)
            last = dts
        }
        return (underflows, lowest / bufsize, joins)
    }

    static let vbvCases: [(clip: String, kbps: Int, maxrate: Int, bufsize: Int)] = [("bikes", 400, 480, 400), ("noisy", 500, 600, 300)]

    /// `--maxrate/--bufsize` with two passes: every segment's second pass starts its buffer half full, so the
    /// buffer is checked over the whole stitched file, joins included, by the reader above. No underflow (nor
    /// in ffmpeg's whole-file two-pass with the same limits), at least that fullness found at every join, and
    /// the bitrate within 3 % of ffmpeg's.
    @Test(arguments: 0..<2)
    func theVBVHoldsAcrossJoins(_ n: Int) throws {
        let (clip, kbps, maxrate, bufsize) = Self.vbvCases[n]
        let source = clip == "bikes" ? try RealFootage.bikes : try Fixtures.cleanThenNoisy()
        let ours = Fixtures.output("two-pass-vbv-tessera.mp4"), theirs = Fixtures.output("two-pass-vbv-ffmpeg.mp4")
        let log = Fixtures.output("two-pass-vbv-ffmpeg")
        defer { for f in [ours, theirs, log + "-0.log", log + "-0.log.mbtree"] { try? FileManager.default.removeItem(atPath: f) } }
        let limits = ["\(maxrate)k", "\(bufsize)k"]
        let segments = try Self.transcode(source, ours, kbps: kbps, ["--maxrate", limits[0], "--bufsize", limits[1], "--segment-seconds", "2"]).segments
        let common = ["-i", source, "-an", "-c:v", "libx264", "-preset", "veryfast", "-b:v", "\(kbps)k", "-maxrate", limits[0],
                      "-bufsize", limits[1], "-passlogfile", log]
        try Tool.ffmpeg(common + ["-pass", "1", "-f", "null", "-"])
        try Tool.ffmpeg(common + ["-pass", "2", theirs])
        let bucket = (maxrate: Double(maxrate * 1000), bufsize: Double(bufsize * 1000))
        let mine = try Self.vbv(ours, maxrate: bucket.maxrate, bufsize: bucket.bufsize, segments: segments)
        let reference = try Self.vbv(theirs, maxrate: bucket.maxrate, bufsize: bucket.bufsize)
        func error(_ path: String) throws -> Double {
            let frames = segments.reduce(0, +)
            return Double(try Tool.videoBytes(path) * 8) / (Double(frames) / 25) / Double(kbps * 1000) - 1
        }
        let (e, eTheirs) = (try error(ours), try error(theirs))
        #expect(segments.count >= 2)
        #expect(mine.underflows <= reference.underflows)
        #expect(mine.underflows == 0)
        // Each segment's second pass plans its buffer from half full: at a join it finds at least that, less
        // the tenth of a buffer x264 keeps spare, or its plan could underflow.
        #expect(mine.joins.count == segments.count - 1 && mine.joins.allSatisfy { $0 >= 0.4 }, "\(mine.joins)")
        // x264 keeps what the cap takes from a segment within it, where ffmpeg's whole file spends it elsewhere.
        #expect(abs(e) <= max(0.02, abs(eTheirs) + 0.03))
    }
}

/// `--codec hevc --bitrate R`: x265's own two passes per segment, its statistics allocated over the file as x264's are.
@Suite(.serialized) struct HEVCTwoPassTests {
    @Test func hevcLandsOnTheTargetInTwoPasses() throws {
        let source = try Fixtures.media("hevc-two-pass.mp4", ["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=8",
                                                              "-vf", "noise=alls=12:allf=t", "-c:v", "libx264", "-preset", "ultrafast", "-g", "50"])
        let output = Fixtures.output("hevc-two-pass.mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let run = try Tool.run(Tool.tesseraBinary, ["transcode", source, "-o", output, "-y", "--codec", "hevc", "--preset", "ultrafast",
                                                    "--bitrate", "400k", "--segment-seconds", "2", "--audio", "none", "--workers", "2",
                                                    "--data-dir", TwoPassTests.dataDir])
        try #require(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("tessera: first pass") && run.stderr.contains("tessera: second pass"), "\(run.stderr)")
        let facts = try OutputFacts.read(output)
        #expect(facts.countedFrames == 200)
        let kbps = Double(try Tool.videoBytes(output) * 8) / 8 / 1000
        // Seen at 397 kb/s (-0.8 %) over 4 segments.
        #expect(abs(kbps / 400 - 1) < 0.05, "\(kbps) kb/s for 400")
        let tag = try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "stream=codec_tag_string", "-of", "csv=p=0", output])
        #expect(tag.contains("hvc1"))
    }
}

/// `--ladder … --two-pass` end to end: each rung's rate is its average, hit within 10 % as ffprobe measures it;
/// every rung holds every frame, with keyframes at the same instants at every packaging cut.
@Suite(.serialized) struct LadderTwoPassTests {
    @Test func eachRungLandsOnItsOwnAverage() throws {
        let source = try Fixtures.cleanThenNoisy()
        let output = Fixtures.output("two-pass-ladder.mp4")
        let rungs = [(name: "240p", kbps: 500), (name: "144p", kbps: 200)]
        let files = rungs.map { output.replacingOccurrences(of: ".mp4", with: "_\($0.name).mp4") }
        defer { for f in files { try? FileManager.default.removeItem(atPath: f) } }
        let run = try Tool.run(Tool.tesseraBinary, ["transcode", source, "-o", output, "-y", "--preset", "veryfast", "--ladder", "240:500k,144:200k",
                                                    "--two-pass", "--hls-time", "2", "--audio", "none", "--workers", "2",
                                                    "--data-dir", TwoPassTests.dataDir])
        try #require(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("tessera: first pass") && run.stderr.contains("tessera: second pass"), "\(run.stderr)")
        let sourceFrames = try OutputFacts.read(source).countedFrames
        var keyframes: [Set<Int>] = []
        for (rung, file) in zip(rungs, files) {
            let facts = try OutputFacts.read(file)
            #expect(facts.countedFrames == sourceFrames, "\(rung.name) is frame-exact")
            let kbps = Double(try Tool.videoBytes(file) * 8) / (Double(facts.countedFrames) / 25) / 1000
            #expect(abs(kbps / Double(rung.kbps) - 1) < 0.10, "\(rung.name): \(kbps) kb/s for \(rung.kbps)")
            let packets = try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "packet=pts_time,flags", "-of", "csv=p=0", file])
            keyframes.append(Set(packets.split(whereSeparator: \.isNewline).compactMap { line -> Int? in
                let fields = line.split(separator: ",")
                guard fields.count >= 2, fields[1].hasPrefix("K"), let time = Double(fields[0]) else { return nil }
                return Int((time * 1000).rounded())
            }))
        }
        // 8 s cut every 2 s: a keyframe at 0, 2, 4 and 6 s in both rungs.
        let cuts: Set<Int> = [0, 2000, 4000, 6000]
        for (rung, found) in zip(rungs, keyframes) {
            #expect(cuts.isSubset(of: found), "\(rung.name) keyframes at \(found.sorted())")
        }
    }
}
