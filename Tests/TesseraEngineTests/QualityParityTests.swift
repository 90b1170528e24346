import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

/// Tessera against one whole-file `ffmpeg -c:v libx264` at the same CRF and preset: size within ±3 %,
/// PSNR within 0.1 dB. bench/real_footage.py measures the same figures.
@Suite(.serialized) struct QualityParityTests {
    @Test func sizeAndPSNRMatchAWholeFileEncode() throws {
        // Near-lossless 640x360 master, 20 s.
        let master = try Fixtures.media("master-360p.mkv", ["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25", "-t", "20",
                                                           "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0"])
        let ours = Fixtures.output("parity-tessera.mp4")
        let theirs = Fixtures.output("parity-ffmpeg.mp4")
        defer {
            try? FileManager.default.removeItem(atPath: ours)
            try? FileManager.default.removeItem(atPath: theirs)
        }
        let settings = EncoderSettings(preset: "veryfast", crf: 23)
        let report = try LocalTranscoder().transcode(input: master, output: ours,
                                                     options: JobOptions(settings: settings, workers: 1))
        try Tool.ffmpeg(["-i", master, "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", theirs])

        func psnr(_ path: String) throws -> Double { try Tool.psnr(path, master, lavfi: "psnr").average }
        let sizeOurs = try FileManager.default.attributesOfItem(atPath: ours)[.size] as! Int
        let sizeTheirs = try FileManager.default.attributesOfItem(atPath: theirs)[.size] as! Int
        let ratio = Double(sizeOurs) / Double(sizeTheirs)
        let delta = try psnr(ours) - psnr(theirs)
        #expect(report.plan.cuts.segments.count >= 2)
        #expect(abs(ratio - 1) <= 0.03)
        #expect(abs(delta) <= 0.1)
    }

    /// Real footage at the default preset: cut only where one whole-file encode puts IDR frames, and
    /// each segment's encoder warmed by its lead-in, Tessera makes that encode's file: size within
    /// ±1.5 %, PSNR within 0.05 dB, and no frame of a segment's first 15 more than 1 dB below the same
    /// frame of the whole-file encode (5-6 dB without the lead-in).
    @Test func realFootageMatchesAWholeFileEncode() throws {
        let source = try RealFootage.bikes
        let ours = Fixtures.output("real-tessera.mp4")
        let theirs = Fixtures.output("real-ffmpeg.mp4")
        defer {
            try? FileManager.default.removeItem(atPath: ours)
            try? FileManager.default.removeItem(atPath: theirs)
        }
        let report = try LocalTranscoder().transcode(input: source, output: ours,
                                                     options: JobOptions(settings: EncoderSettings(preset: "medium", crf: 23), workers: 2))
        try Tool.ffmpeg(["-i", source, "-an", "-c:v", "libx264", "-preset", "medium", "-crf", "23", theirs])

        let sizeRatio = Double(try Tool.videoBytes(ours)) / Double(try Tool.videoBytes(theirs))
        let mseOurs = try Tool.perFrameMSE(ours, source), mseTheirs = try Tool.perFrameMSE(theirs, source)
        func db(_ mse: Double) -> Double { 10 * log10(255 * 255 / max(mse, 1e-10)) }
        let psnrDelta = db(mseOurs.reduce(0, +) / Double(mseOurs.count)) - db(mseTheirs.reduce(0, +) / Double(mseTheirs.count))
        var starts: [Int] = [], at = 0
        for k in report.plan.cuts.segments.indices {
            starts.append(at)
            at += report.plan.outputFrames(k)
        }
        let deficits = starts.dropFirst().flatMap { s in (s..<min(s + 15, mseOurs.count)).map { db(mseOurs[$0]) - db(mseTheirs[$0]) } }
        let worst = deficits.min() ?? 0
        #expect(starts.count >= 2, "a 10 s clip with scene cuts is cut for two encoders")
        #expect(mseOurs.count == mseTheirs.count)
        #expect(abs(sizeRatio - 1) <= 0.015)
        #expect(abs(psnrDelta) <= 0.05)
        #expect(worst >= -1)
    }
}
