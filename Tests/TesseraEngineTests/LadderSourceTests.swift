import Foundation
import Testing
import TesseraCore
import TesseraEngine
import TesseraTestSupport

/// Ladders resolved against real files: the probe's geometry checked against ffprobe's display aspect ratio
/// and rotation.
@Suite struct LadderSourceTests {
    /// Sources made by ffmpeg: a rotated landscape clip, an anamorphic PAL clip and a portrait clip.
    static func sources() throws -> [String] {
        let encode = ["-t", "1", "-c:v", "libx264", "-preset", "ultrafast", "-an"]
        let landscape = try Fixtures.media("ladder-landscape.mp4", ["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25"] + encode)
        return [
            try Fixtures.media("ladder-rotated.mp4", ["-i", landscape, "-c", "copy", "-metadata:s:v:0", "rotate=90"]),
            try Fixtures.media("ladder-anamorphic.mp4", ["-f", "lavfi", "-i", "testsrc2=size=720x576:rate=25", "-vf", "setsar=64/45"] + encode),
            try Fixtures.media("ladder-portrait.mp4", ["-f", "lavfi", "-i", "testsrc2=size=360x640:rate=25"] + encode),
            landscape,
        ]
    }

    /// The picture as shown, from ffprobe: width over height and the shorter side in pixels, from the stored size,
    /// the sample aspect ratio and a quarter turn of the display matrix.
    static func shown(_ path: String) throws -> (aspect: Double, shortSide: Int) {
        let text = try Tool.ffprobe(["-select_streams", "v:0", "-show_streams", "-of", "json", path])
        let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        let stream = try #require((json?["streams"] as? [[String: Any]])?.first)
        let width = try #require(stream["width"] as? Int), height = try #require(stream["height"] as? Int)
        let sar = (stream["sample_aspect_ratio"] as? String ?? "1:1").split(separator: ":").compactMap { Double($0) }
        let pixelAspect = sar.count == 2 && sar[0] > 0 && sar[1] > 0 ? sar[0] / sar[1] : 1
        let sideData = (stream["side_data_list"] as? [[String: Any]]) ?? []
        let rotation = sideData.compactMap { ($0["rotation"] as? Int) ?? ($0["rotation"] as? Double).map(Int.init) }.first ?? 0
        let shownWidth = Double(width) * pixelAspect, shownHeight = Double(height)
        let shortSide = Int(min(shownWidth, shownHeight).rounded())
        return abs(rotation) % 180 == 90 ? (shownHeight / shownWidth, shortSide) : (shownWidth / shownHeight, shortSide)
    }

    @Test func rungsKeepTheShownAspectRatio() throws {
        let paths = try Self.sources()
        var portraits = 0
        for path in paths {
            let shown = try Self.shown(path)
            let source = LadderSource(try MediaProbe.probe(path), picture: PictureSettings(), fps: 25)
            let resolved = try Ladder(parsing: "720,480,360,240").resolve(for: source, settings: EncoderSettings(), picture: PictureSettings())
            if shown.aspect < 1 { portraits += 1 }
            #expect(source.isPortrait == (shown.aspect < 1), "\(path)")
            #expect(resolved.dropped.allSatisfy { $0.height > shown.shortSide }, "\(path)")
            #expect(!resolved.rungs.isEmpty && resolved.rungs.allSatisfy { $0.rung.height <= shown.shortSide }, "\(path)")
            for rung in resolved.rungs {
                #expect(rung.width % 2 == 0 && rung.height % 2 == 0)
                #expect(min(rung.width, rung.height) == rung.rung.height, "a rung names the shorter side")
                // The derived side is within one pixel of the shown aspect (rounded to even).
                let miss = shown.aspect >= 1 ? Double(rung.height) * shown.aspect - Double(rung.width)
                                             : Double(rung.width) / shown.aspect - Double(rung.height)
                #expect(abs(miss) <= 1, "\(path): \(rung.width)x\(rung.height) for aspect \(shown.aspect)")
            }
        }
        #expect(portraits == 2, "the rotated and the portrait clip are shown portrait")
    }
}
