import Foundation
import Testing
import TesseraTestSupport

/// `tessera transcode --ladder`'s HLS output played by headless Chromium through Media Source Extensions: every rung
/// to the end, the audio group beside a rung, and a switch of rung at every segment boundary.
@Suite(.serialized) struct LadderPlaybackTests {
    static var frames: Int { LadderTests.seconds * LadderTests.rate }
    static var frame: Double { 1 / Double(LadderTests.rate) }

    @Test(.chromium) func eachRungPlaysEveryFrameToTheEnd() throws {
        let output = try LadderTests.hls.get()
        for rung in try output.variants.map(output.rung) {
            let report = try MSEPlayer.play(folder: output.folder, rung: rung)
            #expect(report.supported[rung.mimeType] == true, "\(rung.mimeType) in MSE")
            #expect(report.error == nil && report.ended, "\(rung.name): \(report)")
            #expect(report.appended == rung.segments.count + 1, "\(rung.name): \(report)")
            #expect(report.totalVideoFrames == Self.frames && report.corruptedVideoFrames == 0, "\(rung.name): every frame decoded: \(report)")
            let buffered = try #require(report.bufferedAfterAppends, "\(rung.name): \(report)")
            #expect(buffered.count == 1, "\(rung.name): one range: \(report)")
            let range = try #require(buffered.first)
            #expect(abs(range.upperBound - range.lowerBound - Double(Self.frames) * Self.frame) < Self.frame / 2, "\(rung.name): every frame buffered: \(report)")
            #expect(abs(report.currentTime - range.upperBound) < Self.frame, "\(rung.name): played to the end: \(report)")
        }
    }

    @Test(.chromium) func aRungWithTheAudioGroupPlaysToTheEnd() throws {
        let output = try LadderTests.hls.get()
        let audio = try #require(try output.audio())
        let video = try output.rung(try #require(output.variants.last))
        let report = try MSEPlayer.play(folder: output.folder, rung: video, audio: audio)
        #expect(report.error == nil && report.ended, "\(report)")
        #expect(report.appended == video.segments.count + audio.segments.count + 2, "\(report)")
        #expect(report.audioBufferedAfterAppends?.count == 1, "gap-free audio: \(report)")
        #expect(report.bufferedAfterAppends?.count == 1, "\(report)")
        #expect(report.totalVideoFrames == Self.frames, "every frame decoded: \(report)")
    }

    /// An AV1 ladder (SVT-AV1 at its fastest preset): every rung plays every frame to the end, and the CODECS the
    /// master names are those of the rung's av1C. Chromium decodes AV1 through MSE; it does not decode HEVC.
    @Test(.chromium) func eachAV1RungPlaysEveryFrameToTheEnd() throws {
        let output = try LadderTests.transcode("ladder-av1", ["--codec", "av1"], preset: "12")
        for variant in output.variants {
            let rung = try output.rung(variant)
            #expect(rung.mimeType.hasPrefix("video/mp4; codecs=\"av01.0."), "\(rung.mimeType)")
            #expect(rung.mimeType.contains("\"\(variant.attributes["CODECS"]?.split(separator: ",").first ?? "")\""),
                    "\(rung.name): the master's CODECS \(variant.attributes["CODECS"] ?? "") against the init segment's \(rung.mimeType)")
            let report = try MSEPlayer.play(folder: output.folder, rung: rung)
            #expect(report.supported[rung.mimeType] == true, "\(rung.mimeType) in MSE")
            #expect(report.error == nil && report.ended, "\(rung.name): \(report)")
            #expect(report.appended == rung.segments.count + 1, "\(rung.name): \(report)")
            #expect(report.totalVideoFrames == Self.frames && report.corruptedVideoFrames == 0, "\(rung.name): every frame decoded: \(report)")
            #expect(report.bufferedAfterAppends?.count == 1, "\(rung.name): one range: \(report)")
        }
    }

    /// Segment i from rung i mod 3, each after its rung's init segment: one gap-free range, the same as one rung's.
    @Test(.chromium) func switchingRungAtEverySegmentKeepsOneRange() throws {
        let output = try LadderTests.hls.get()
        let rungs = try output.variants.map(output.rung)
        let single = try MSEPlayer.play(folder: output.folder, rung: rungs[0])
        let whole = try #require(single.bufferedAfterAppends?.first, "\(single)")
        for order in [rungs, rungs.reversed()] {
            let report = try MSEPlayer.playSwitching(folder: output.folder, rungs: order)
            #expect(report.error == nil && report.ended, "\(order.map(\.name)): \(report)")
            #expect(report.appended == 2 * rungs[0].segments.count, "an init before every segment: \(report)")
            let buffered = try #require(report.bufferedAfterAppends, "\(report)")
            #expect(buffered.count == 1, "one gap-free range: \(report)")
            let range = try #require(buffered.first)
            #expect(abs(range.lowerBound - whole.lowerBound) < 0.001 && abs(range.upperBound - whole.upperBound) < 0.001,
                    "the range of one whole rung: \(range) against \(whole)")
            #expect(report.totalVideoFrames == Self.frames && report.corruptedVideoFrames == 0, "every frame decoded: \(report)")
        }
    }
}
