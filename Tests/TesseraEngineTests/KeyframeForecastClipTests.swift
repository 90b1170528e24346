import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

/// The forecast against libx264 itself: the generator's clips (photographs under camera moves, cuts on and
/// off the source's keyframes, grain, transitions, flashes, slow pans; bench/forecast_clips.py at 320x180),
/// each encoded whole by ffmpeg at medium and veryfast. The forecast must have at least 95 % of those
/// encodes' IDRs within one frame, and no keyframe the encodes do not have.
@Suite(.serialized) struct KeyframeForecastClipTests {
    static let clips = ["cuts-on-keyframes", "cuts-off-keyframes", "grain-heavy", "grain-medium", "transitions", "flashes", "slow-pans"]

    /// The clips, made once into the real-footage cache (photographs from scikit-image's wheel, from PyPI).
    static func clip(_ name: String) throws -> String {
        let folder = (RealFootage.directory as NSString).appendingPathComponent("forecast-320x180")
        let path = (folder as NSString).appendingPathComponent(name + ".mp4")
        if FileManager.default.fileExists(atPath: path) { return path }
        let script = Fixtures.repository.appendingPathComponent("bench/forecast_clips.py").path
        let made = try Tool.run("python3", [script, folder, "--size", "320x180", "--clips", name])
        guard made.status == 0 else { throw ToolError("forecast_clips.py \(name): \(made.stderr.suffix(600))") }
        return path
    }

    /// Display positions of the IDR frames of one whole-file libx264 encode of `path`.
    static func wholeFileIDRs(_ path: String, preset: String) throws -> [Int] {
        let output = Fixtures.output("whole-\(preset).mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        try Tool.ffmpeg(["-i", path, "-an", "-c:v", "libx264", "-preset", preset, "-crf", "23", output])
        let probe = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts,flags",
                                             "-of", "csv=p=0", output])
        let packets = probe.text.split(separator: "\n").compactMap { line -> (Int, Bool)? in
            let fields = line.split(separator: ",")
            guard fields.count == 2, let pts = Int(fields[0]) else { return nil }
            return (pts, fields[1].contains("K"))
        }.sorted { $0.0 < $1.0 }
        return packets.indices.filter { packets[$0].1 }
    }

    /// Display positions of the forecast keyframes of a plan of `path` at `preset`.
    static func forecast(_ path: String, preset: String) throws -> [Int] {
        let probe = try MediaProbe.probe(path)
        let plan = try JobPlanner.plan(probe, options: JobOptions(settings: EncoderSettings(preset: preset), segmentSeconds: nil, workers: 2))
        let planner = try CutPlanner(packets: probe.packets, timeBase: probe.video.timeBase, frameRate: nil)
        return try #require(plan.cuts.forecastKeyframes).compactMap { planner.displayPosition(of: $0) }
    }

    @Test func theForecastHasTheWholeFileEncodesIDRs() throws {
        var matched = 0, total = 0, report: [String] = []
        for name in Self.clips {
            let path = try Self.clip(name)
            let forecast = try Self.forecast(path, preset: "medium")
            for preset in ["medium", "veryfast"] {
                let idrs = try Self.wholeFileIDRs(path, preset: preset)
                let found = idrs.filter { idr in forecast.contains { abs($0 - idr) <= 1 } }
                let foreign = forecast.filter { cut in !idrs.contains { abs($0 - cut) <= 1 } }
                matched += found.count
                total += idrs.count
                report.append("\(name) \(preset): libx264 \(idrs), forecast \(forecast)")
                #expect(foreign.isEmpty, "\(name) \(preset): forecast keyframes \(foreign) where libx264 made no IDR (\(idrs))")
            }
            #expect(try Self.forecast(path, preset: "veryfast") == forecast, "\(name): the forecast does not depend on the preset")
        }
        #expect(matched * 100 >= 95 * total, "\(matched) of \(total) IDRs forecast:\n\(report.joined(separator: "\n"))")
    }
}
