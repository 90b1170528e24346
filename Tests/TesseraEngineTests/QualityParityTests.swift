import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine

/// Tessera against one whole-file `ffmpeg -c:v libx264` at the same CRF and preset: size within ±3 %,
/// PSNR within 0.1 dB. Prints the figures; it measures quality, not time.
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
        print(String(format: "quality parity: %d segments, size ratio %.4f (target 0.97-1.03), PSNR difference %+.3f dB (target ±0.1)",
                     report.plan.cuts.segments.count, ratio, delta))
        #expect(report.plan.cuts.segments.count >= 2)
        #expect(abs(ratio - 1) <= 0.03)
        #expect(abs(delta) <= 0.1)
    }
}
