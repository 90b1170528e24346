import Foundation
import Testing
@testable import TesseraCore

/// `--two-pass` beside `--ladder`: each rung's rate is its average, encoded in two passes.
@Suite struct LadderTwoPassTests {
    let source = LadderSource(width: 1920, height: 1080, fps: 30)

    @Test func aRungsRateIsItsAverageWithAPeakOfTwiceIt() throws {
        let ladder = try Ladder(parsing: "720:3M,360").resolve(for: source, settings: EncoderSettings(), picture: PictureSettings(),
                                                                twoPass: true)
        let defaultRate = Ladder.defaultPeakRate(pixels: 640 * 360)
        #expect(ladder.rungs.map(\.averageRate) == [3_000_000, defaultRate])
        #expect(ladder.rungs.map(\.maxrate) == [6_000_000, 2 * defaultRate])
        #expect(ladder.rungs.map(\.bufsize) == [12_000_000, 4 * defaultRate])
        let settings = ladder.rungs[0].settings(from: EncoderSettings(preset: "fast", crf: 21))
        #expect(settings.bitrate == 3_000_000 && settings.crf == nil && settings.passes == 2 && settings.twoPass)
        #expect(settings.maxrate == 6_000_000 && settings.bufsize == 12_000_000 && settings.preset == "fast")
        #expect(throws: Never.self) { try settings.validate() }
        // The level carries the peak: 720p at a 6 Mb/s peak fits 3.1, at 2 x 10 Mb/s it needs 3.2.
        #expect(settings.level == "3.1")
        let high = try Ladder(parsing: "720:10M").resolve(for: source, settings: EncoderSettings(), picture: PictureSettings(), twoPass: true)
        #expect(high.rungs[0].level?.name == "3.2")
        // Capped CRF is as before.
        let capped = try Ladder(parsing: "720:3M").resolve(for: source, settings: EncoderSettings(), picture: PictureSettings())
        #expect(capped.rungs[0].averageRate == nil && capped.rungs[0].settings(from: EncoderSettings()).twoPass == false)
    }

    @Test func theFlagAndTheSettingsKeyMakeATwoPassLadder() throws {
        var commandLine = EncodingRequest()
        commandLine.ladder = ["720,360"]
        commandLine.twoPass = true
        let stacked = try Recipe.stack(file: nil, commandLine: commandLine)
        let spec = try #require(try stacked.ladderSpec(output: "out/master.m3u8"))
        #expect(spec.twoPass && spec.summary.hasSuffix(", two passes"))
        let file = try JSONDecoder().decode(EncodingRequest.self, from: Data(#"{"ladder": "720,360", "two-pass": true}"#.utf8))
        #expect(try file.ladderSpec(output: "out.mp4")?.twoPass == true)
        #expect(try #require(try EncodingRequest().over(file).ladderSpec(output: "out.mp4")).twoPass)
        // A --crf above a two-pass layer takes the rate control back.
        var crf = EncodingRequest()
        crf.crf = 20
        #expect(try crf.over(file).ladderSpec(output: "out.mp4")?.twoPass == false)
        // Without it, capped CRF.
        commandLine.twoPass = nil
        #expect(try commandLine.ladderSpec(output: "out.mp4")?.twoPass == false)
    }

    @Test func aSpecStoredBeforeTwoPassLaddersReadsAsCappedCRF() throws {
        let stored = #"{"ladder": [{"height": 720}], "packaging": "hls", "segmentSeconds": 6, "audioPerRung": false}"#
        let spec = try JSONDecoder().decode(LadderSpec.self, from: Data(stored.utf8))
        #expect(!spec.twoPass)
        let twoPass = LadderSpec(ladder: try Ladder(parsing: "720"), packaging: .hls, twoPass: true)
        #expect(try JSONDecoder().decode(LadderSpec.self, from: JSONEncoder().encode(twoPass)) == twoPass)
        #expect(JobSpec(ladder: twoPass).twoPass && !JobSpec(ladder: spec).twoPass)
    }

    @Test func twoPassWithoutALadderIsRefusedInOneLine() throws {
        var request = EncodingRequest()
        request.twoPass = true
        let refused = #expect(throws: SettingsError.self) { try request.resolved() }
        #expect(refused?.description.hasPrefix("--two-pass needs --ladder") == true)
        #expect(refused?.description.contains("\n") == false)
        let file = try JSONDecoder().decode(EncodingRequest.self, from: Data(#"{"two-pass": true, "crf": 20}"#.utf8))
        #expect(throws: SettingsError.self) { try file.resolved() }
    }

    @Test func aBitrateBesideALadderIsRefusedNamingTwoPass() throws {
        var request = EncodingRequest()
        request.ladder = ["720"]
        request.bitrate = "2M"
        let refused = #expect(throws: SettingsError.self) { try request.resolved() }
        #expect(refused?.description.contains("--two-pass") == true && refused?.description.contains("--bitrate") == true)
        request.twoPass = true
        #expect(throws: SettingsError.self) { try request.resolved() }
        do {
            _ = try Ladder(parsing: "720").resolve(for: source, settings: EncoderSettings(crf: nil, bitrate: 2_000_000),
                                                   picture: PictureSettings(), twoPass: true)
            Issue.record("--bitrate beside a two-pass ladder")
        } catch {
            #expect(error.code == .conflictingOption && error.description.contains("--two-pass"))
        }
    }
}
