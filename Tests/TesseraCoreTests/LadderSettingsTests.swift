import Foundation
import Testing
@testable import TesseraCore

/// `ladder` as a settings-file key.
@Suite struct LadderSettingsTests {
    @Test func settingsFilesTakeAStringOrAList() throws {
        func ladder(_ json: String) throws -> Ladder? {
            try JSONDecoder().decode(EncodingRequest.self, from: Data(json.utf8)).resolvedLadder()
        }
        let expected = try Ladder(parsing: "1080,720:3M,480")
        #expect(try ladder(#"{"ladder": "1080,720:3M,480"}"#) == expected)
        #expect(try ladder(#"{"ladder": [1080, "720:3M", 480]}"#) == expected)
        #expect(try ladder(#"{"ladder": 720}"#) == Ladder(parsing: "720"))
        #expect(try ladder(#"{"crf": 20}"#) == nil)
        let bad = try JSONDecoder().decode(EncodingRequest.self, from: Data(#"{"ladder": [720, 0]}"#.utf8))
        #expect(throws: SettingsError.self) { try bad.resolved() }
    }

    @Test func aLadderOverTheRateItReplacesIsRefused() throws {
        var commandLine = EncodingRequest()
        commandLine.ladder = ["1080,720,480,360"]
        let spec = try Recipe.stack(file: nil, commandLine: commandLine).resolved()
        #expect(spec.settings.crf == 23 && spec.settings.maxrate == nil && spec.picture.maxSize == nil)
        // --maxrate beside the ladder: refused, the ladder caps each rung itself.
        commandLine.maxrate = "5M"
        commandLine.bufsize = "10M"
        let refused = #expect(throws: SettingsError.self) { try Recipe.stack(file: nil, commandLine: commandLine).resolved() }
        #expect(refused?.description.contains("--maxrate") == true)
    }

    @Test func aLadderReplacesTheSizingAndRateBelowIt() throws {
        var commandLine = EncodingRequest()
        commandLine.recipe = "web-720p"
        commandLine.ladder = ["720,360"]
        let stacked = try Recipe.stack(file: nil, commandLine: commandLine)
        #expect(stacked.maxSize == nil && stacked.maxrate == nil && stacked.bufsize == nil)
        let spec = try stacked.resolved()
        #expect(spec.settings.crf == 23 && spec.settings.keyintSeconds == 2, "the rest of the recipe stays")
        var sameLayer = EncodingRequest()
        sameLayer.ladder = ["720"]
        sameLayer.size = "640x360"
        let refused = #expect(throws: SettingsError.self) { try sameLayer.resolved() }
        #expect(refused?.description.contains("--size") == true)
    }
}
