import Foundation
import Testing
@testable import TesseraCore

struct EncodingRequestTests {
    @Test func layersOverrideValueByValue() throws {
        var file = EncodingRequest()
        file.recipe = "mobile"
        file.crf = 20
        file.maxSize = "640x360"
        var commandLine = EncodingRequest()
        commandLine.audioRate = 44100
        commandLine.size = "320x240"
        let spec = try Recipe.stack(file: file, commandLine: commandLine).resolved()
        #expect(spec.settings.crf == 20 && spec.settings.bitrate == nil, "the file's --crf drops the recipe's bitrate")
        #expect(spec.settings.keyint == 30 && spec.settings.level == "4.1", "the rest of the recipe stays")
        #expect(spec.audio.sampleRate == 44100 && spec.audio.bitrate == 80_000)
        #expect(spec.picture.size == FrameSize(width: 320, height: 240) && spec.picture.maxSize == nil)
    }

    @Test func settingsFilesTakeStringsOrNumbersAndRefuseUnknownKeys() throws {
        let request = try JSONDecoder().decode(EncodingRequest.self, from: Data(#"{"bitrate": 750000, "fps": "29.97", "keyint": "30", "mirror": "horizontal,vertical"}"#.utf8))
        #expect(request.bitrate == "750000" && request.keyint == 30 && request.mirror == ["horizontal", "vertical"])
        let spec = try request.resolved()
        #expect(spec.picture.fps == Rational(30000, 1001) && spec.settings.bitrate == 750_000)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(EncodingRequest.self, from: Data(#"{"crff": 20}"#.utf8)) }
    }

    /// `--bitrate` freezes two passes into the job unless `--passes 1` or CBR; CRF has none, and `--crf` above
    /// drops the passes below along with the bitrate.
    @Test func bitrateDefaultsToTwoPassesExceptCBR() throws {
        func settings(_ fill: (inout EncodingRequest) -> Void, over lower: EncodingRequest = EncodingRequest()) throws -> EncoderSettings {
            var r = EncodingRequest()
            fill(&r)
            return try r.over(lower).resolved().settings
        }
        #expect(try settings { $0.bitrate = "800k" }.passes == 2)
        #expect(try settings { $0.bitrate = "800k"; $0.maxrate = "1200k"; $0.bufsize = "2M" }.twoPass)
        #expect(try settings { $0.bitrate = "800k"; $0.passes = 1 }.twoPass == false)
        #expect(try settings { $0.bitrate = "800k"; $0.maxrate = "800k"; $0.bufsize = "2M" }.passes == nil, "CBR")
        #expect(try settings { $0.crf = 20 }.passes == nil)
        var file = EncodingRequest()
        file.bitrate = "800k"
        file.passes = 2
        #expect(try settings({ $0.crf = 20 }, over: file).passes == nil)
        #expect(throws: SettingsError.self) { try settings { $0.crf = 20; $0.passes = 2 } }
        #expect(throws: SettingsError.self) { try settings { $0.bitrate = "800k"; $0.maxrate = "800k"; $0.bufsize = "2M"; $0.passes = 2 } }
    }

    @Test func frameRatesAndTicks() {
        #expect(Rational(frameRate: "29.97") == Rational(30000, 1001))
        #expect(Rational(frameRate: "25") == Rational(25, 1))
        #expect(Rational(frameRate: "12.5") == Rational(25, 2))
        #expect(Rational(frameRate: "0") == nil && Rational(frameRate: "fast") == nil)
        // Adjacent spans give adjacent tick ranges: 25 fps source (1/12800) to 30 fps.
        var format = VideoOutputFormat(width: 2, height: 2, pixelFormat: "yuv420p", timeBase: Rational(1, 30), frameRate: Rational(30, 1),
                                       sampleAspectRatio: Rational(1, 1), colorRange: 0, colorPrimaries: 2, colorTransfer: 2,
                                       colorSpace: 2, chromaLocation: 0)
        format.resamplesFrameRate = true
        let source = Rational(1, 12800)
        let a = format.outputTicks(start: 0, end: 12800, sourceTimeBase: source)
        let b = format.outputTicks(start: 12800, end: 25600 + 512, sourceTimeBase: source)
        #expect(a == 0..<30 && b.lowerBound == a.upperBound && b.upperBound == 62)
    }

    @Test func impossiblePictureRequests() {
        for (size, ok) in [("0x0", false), ("321x240", false), ("320x240", true)] {
            var r = EncodingRequest()
            r.size = size
            #expect(((try? r.resolved()) != nil) == ok, "\(size)")
        }
        var r = EncodingRequest()
        r.recipe = "potato"
        #expect(throws: SettingsError.self) { try Recipe.stack(file: nil, commandLine: r) }
    }
}
