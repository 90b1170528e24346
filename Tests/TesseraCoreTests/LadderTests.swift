import Foundation
import Testing
@testable import TesseraCore

@Suite struct LadderTests {
    /// The ladder error `body` throws; an issue when it throws none or another.
    func refusal<T>(_ body: () throws -> T, sourceLocation: SourceLocation = #_sourceLocation) -> LadderError? {
        #expect(throws: LadderError.self, sourceLocation: sourceLocation) { _ = try body() }
    }

    // MARK: Parsing

    @Test func parsesHeightsAndRates() throws {
        let ladder = try Ladder(parsing: "1080,720:3M,480,360")
        #expect(ladder.rungs.map(\.height) == [1080, 720, 480, 360])
        #expect(ladder.rungs.map(\.peakRate) == [nil, 3_000_000, nil, nil])
        #expect(ladder.description == "1080,720:3M,480,360")
        let spaced = try Ladder(parsing: " 720p , 480:2500k ")
        #expect(spaced.rungs == [.init(height: 720), .init(height: 480, peakRate: 2_500_000)])
        #expect(try Ladder(items: ["1080", "720:3M"]) == Ladder(items: ["1080,720:3M"]))
        #expect(try Ladder(parsing: "540:1234567").description == "540:1234567", "a rate in plain bits per second")
    }

    @Test(arguments: [
        ("0", LadderError.Code.notPositive), ("-2", .notPositive), ("720,abc", .notAHeight), ("", .empty), ("  ", .empty),
        (",", .empty), ("1080,,720", .notAHeight), ("720,720:3M", .duplicate), ("720p,720", .duplicate), ("721", .oddHeight),
        ("8640", .tooTall), ("720:0", .badRate), ("720:-1M", .badRate), ("720:abc", .badRate), ("720:", .badRate),
        ("720:8k", .badRate), ("1.5e3", .notAHeight), ("720:3M:4M", .badRate),
    ])
    func refusesBadLadders(text: String, code: LadderError.Code) {
        do {
            let ladder = try Ladder(parsing: text)
            Issue.record("'\(text)' parsed as \(ladder)")
        } catch {
            #expect(error.code == code, "'\(text)': \(error)")
            #expect(error.description.hasPrefix("--ladder") && !error.description.contains("\n"))
        }
    }

    @Test func refusesTooManyRungs() {
        let text = (1...17).map { String($0 * 100) }.joined(separator: ",")
        #expect(refusal { try Ladder(parsing: text) }?.code == .tooManyRungs)
        #expect(throws: Never.self) { try Ladder(parsing: (1...16).map { String($0 * 100) }.joined(separator: ",")) }
    }

    @Test func errorsNameTheRung() throws {
        #expect(refusal { try Ladder(parsing: "1080,720:abc") }?.description.contains("720:abc") == true)
        #expect(refusal { try Ladder(parsing: "721") }?.description.contains("721") == true)
    }

    @Test func codableRoundTripsAndChecksWhatItReads() throws {
        let ladder = try Ladder(parsing: "1080,720:3M,360")
        let data = try JSONEncoder().encode(ladder)
        #expect(try JSONDecoder().decode(Ladder.self, from: data) == ladder)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Ladder.self, from: Data(#"[{"height": 721}]"#.utf8)) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Ladder.self, from: Data("[]".utf8)) }
    }

    // MARK: Sizes

    func resolve(_ text: String, _ source: LadderSource, settings: EncoderSettings = EncoderSettings(),
                 picture: PictureSettings = PictureSettings()) throws(LadderError) -> ResolvedLadder {
        try Ladder(parsing: text).resolve(for: source, settings: settings, picture: picture)
    }

    func sizes(_ ladder: ResolvedLadder) -> [String] { ladder.rungs.map { "\($0.width)x\($0.height)" } }

    @Test func landscapeSizesKeepTheAspectRatio() throws {
        let wide = try resolve("1080,720,480,360", LadderSource(width: 1920, height: 1080, fps: 30))
        #expect(sizes(wide) == ["1920x1080", "1280x720", "854x480", "640x360"])
        #expect(wide.dropped.isEmpty && wide.notice == nil)
        let fourThree = try resolve("720,480,360", LadderSource(width: 1440, height: 1080, fps: 25))
        #expect(sizes(fourThree) == ["960x720", "640x480", "480x360"])
    }

    @Test func portraitRungsNameTheShortSide() throws {
        let phone = try resolve("1080,720,480", LadderSource(width: 1080, height: 1920, fps: 30))
        #expect(sizes(phone) == ["1080x1920", "720x1280", "480x854"])
        #expect(phone.rungs.map(\.name) == ["1080p", "720p", "480p"])
        let small = try resolve("1080,720", LadderSource(width: 720, height: 1280, fps: 30))
        #expect(sizes(small) == ["720x1280"])
        #expect(small.notice == "--ladder: dropped 1080: above the source's 720 columns")
    }

    @Test func rotationMetadataTurnsTheLadder() throws {
        // A phone's landscape-stored frames shown upright: FFmpeg reports -90 (counter-clockwise degrees).
        let upright = LadderSource(width: 1920, height: 1080, sampleAspectRatio: Rational(1, 1), rotation: -90,
                                   picture: PictureSettings(), fps: 30)
        #expect(upright.quarterTurns == 1 && upright.isPortrait)
        #expect(sizes(try resolve("720,360", upright)) == ["720x1280", "360x640"])
        let kept = LadderSource(width: 1920, height: 1080, sampleAspectRatio: Rational(1, 1), rotation: -90,
                                picture: PictureSettings(rotate: "none"), fps: 30)
        #expect(sizes(try resolve("720,360", kept)) == ["1280x720", "640x360"], "--rotate none keeps the stored pixels")
    }

    @Test func anamorphicSourcesGetSquarePixels() throws {
        // PAL 16:9: 720x576 stored, pixels 64:45 wide, shown 1024x576.
        let pal = LadderSource(width: 720, height: 576, sampleAspectRatio: Rational(64, 45), fps: 25)
        let ladder = try resolve("720,576,480,360", pal)
        #expect(sizes(ladder) == ["1024x576", "854x480", "640x360"])
        #expect(ladder.dropped.map(\.height) == [720])
        // HDV: 1440x1080 stored with 4:3 pixels is 16:9.
        #expect(sizes(try resolve("720", LadderSource(width: 1440, height: 1080, sampleAspectRatio: Rational(4, 3), fps: 25))) == ["1280x720"])
        // Turned a quarter: the pixel aspect turns with the picture (576x720 stored-as-shown at 45:64 is 405x720).
        let turned = LadderSource(width: 720, height: 576, sampleAspectRatio: Rational(64, 45), quarterTurns: 1, fps: 25)
        #expect(turned.isPortrait && turned.shortSide == 405)
        #expect(sizes(try resolve("480,360", turned)) == ["360x640"])
        // An unknown pixel aspect (0/1) is square.
        #expect(sizes(try resolve("360", LadderSource(width: 640, height: 480, sampleAspectRatio: Rational(0, 1), fps: 25))) == ["480x360"])
    }

    @Test func oddWidthsRoundToTheNearestEven() throws {
        // 1280x536 (2.39:1): 360 rows make 859.7 columns, 240 rows 573.1.
        let scope = try resolve("360,240", LadderSource(width: 1280, height: 536, fps: 24))
        #expect(sizes(scope) == ["860x360", "574x240"])
        for rung in scope.rungs {
            #expect(rung.width % 2 == 0 && rung.height % 2 == 0)
            #expect(abs(Double(rung.width) - Double(rung.height) * 1280 / 536) <= 1)
        }
        // Never wider than the source: 853x480 at 480 rows stays 852, not 854.
        #expect(sizes(try resolve("480", LadderSource(width: 853, height: 480, fps: 30))) == ["852x480"])
    }

    @Test func rungsAboveTheSourceAreDropped() throws {
        let source = LadderSource(width: 854, height: 480, fps: 30)
        let ladder = try resolve("1080,720,480,360", source)
        #expect(sizes(ladder) == ["854x480", "640x360"])
        #expect(ladder.dropped.map(\.height) == [1080, 720] && !ladder.fellBackToSource)
        #expect(ladder.notice == "--ladder: dropped 1080 and 720: above the source's 480 rows")
        let three = try resolve("1080,720,540,360", LadderSource(width: 640, height: 360, fps: 30))
        #expect(three.notice == "--ladder: dropped 1080, 720 and 540: above the source's 360 rows")
    }

    @Test func aSourceBelowEveryRungMakesOneRungAtItsOwnSize() throws {
        let ladder = try resolve("1080,720:3M,480:1M", LadderSource(width: 320, height: 241, fps: 30))
        #expect(ladder.fellBackToSource && ladder.dropped.count == 3)
        #expect(sizes(ladder) == ["318x240"], "240 rows at the source's 320:241")
        #expect(ladder.rungs[0].maxrate == 1_000_000, "the smallest dropped rung's rate")
        #expect(ladder.notice == "--ladder: dropped 1080, 720 and 480: above the source's 241 rows; one rung at 318x240 instead")
    }

    // MARK: Rates

    @Test func defaultCapsFollowApplesExampleLadder() throws {
        let ladder = try resolve("1080,720,540,480,360,234", LadderSource(width: 1920, height: 1080, fps: 30))
        // 1080, 720, 540, 360 and 234 are in the table; 480 (854x480) lies between 768x432 and 960x540:
        // 1100 + (409920 - 331776) / (518400 - 331776) * 900 = 1476.9 kb/s.
        #expect(ladder.rungs.map(\.maxrate) == [7_800_000, 4_500_000, 2_000_000, 1_477_000, 365_000, 145_000])
        #expect(ladder.rungs.allSatisfy { $0.rateIsDefault && $0.bufsize == 2 * $0.maxrate })
        // Outside the table: the nearest entry's bits per pixel (4x 1080p's pixels; 256x144 is 36864/97344 of 416x234).
        #expect(Ladder.defaultPeakRate(pixels: 3840 * 2160) == 31_200_000)
        #expect(Ladder.defaultPeakRate(pixels: 256 * 144) == 55_000)
        // Fewer pixels, a lower cap: 4:3 at 480 rows below 16:9 at 480 rows.
        #expect(Ladder.defaultPeakRate(pixels: 640 * 480) < Ladder.defaultPeakRate(pixels: 854 * 480))
        let heights = stride(from: 144, through: 2160, by: 2).map { Ladder.defaultPeakRate(pixels: $0 * $0 * 16 / 9) }
        #expect(zip(heights, heights.dropFirst()).allSatisfy { $0 <= $1 }, "the cap never falls as the picture grows")
    }

    @Test func aNamedRateIsThePeakWithTwiceTheBuffer() throws {
        let ladder = try resolve("720:3M,360:800k", LadderSource(width: 1920, height: 1080, fps: 30))
        #expect(ladder.rungs.map(\.maxrate) == [3_000_000, 800_000])
        #expect(ladder.rungs.map(\.bufsize) == [6_000_000, 1_600_000])
        #expect(ladder.rungs.allSatisfy { !$0.rateIsDefault })
        let settings = ladder.rungs[0].settings(from: EncoderSettings(preset: "fast", crf: 21))
        #expect(settings.maxrate == 3_000_000 && settings.bufsize == 6_000_000 && settings.level == "3.1")
        #expect(settings.preset == "fast" && settings.crf == 21)
        #expect(throws: Never.self) { try settings.validate() }
    }

    // MARK: Levels

    @Test func eachRungGetsTheLowestLevelThatFits() throws {
        let source = LadderSource(width: 1920, height: 1080, fps: 30)
        // 1080: 8160 macroblocks, 244800/s → 4; 720: 3600, 108000/s → 3.1; 854x480: 1620 at 30 fps is above
        // level 3's 40500/s → 3.1; 640x360: 920 → 3.
        #expect(try resolve("1080,720,480,360", source).rungs.map(\.level?.name) == ["4", "3.1", "3.1", "3"])
        #expect(try resolve("1080", LadderSource(width: 1920, height: 1080, fps: 60)).rungs[0].level?.name == "4.2")
        // 21 Mb/s is above 3.1's 17.5 Mb/s for High; for Main, above 3.2's and 4's 20 Mb/s.
        #expect(try resolve("720:21M", source).rungs[0].level?.name == "3.2")
        #expect(try resolve("720:21M", source, settings: EncoderSettings(profile: "main")).rungs[0].level?.name == "4.1")
    }

    @Test func aPinnedLevelRefusesTheRungBeyondIt() throws {
        let source = LadderSource(width: 1920, height: 1080, fps: 30)
        let pinned = EncoderSettings(level: "3.1")
        let fitting = try resolve("720,480,360", source, settings: pinned)
        #expect(fitting.rungs.allSatisfy { $0.level?.name == "3.1" })
        do {
            _ = try resolve("1080,720", source, settings: pinned)
            Issue.record("1080 at level 3.1")
        } catch {
            #expect(error.code == .exceedsLevel)
            #expect(error.description.contains("rung 1080") && error.description.contains("--level 3.1") && !error.description.contains("\n"))
        }
        // A named rate beyond the level's bitrate is refused too.
        #expect(refusal { try resolve("720:30M", source, settings: pinned) }?.code == .exceedsLevel)
    }

    @Test func aRungBeyondEveryLevelIsRefused() {
        #expect(refusal { try resolve("2160", LadderSource(width: 3840, height: 2160, fps: 1000)) }?.code == .beyondLevels)
    }

    @Test func optionsALadderReplacesAreRefused() {
        let source = LadderSource(width: 1920, height: 1080, fps: 30)
        let cases: [(EncoderSettings, PictureSettings)] = [
            (EncoderSettings(), PictureSettings(maxSize: FrameSize(width: 1280, height: 720))),
            (EncoderSettings(), PictureSettings(size: FrameSize(width: 1280, height: 720))),
            (EncoderSettings(crf: nil, bitrate: 2_000_000), PictureSettings()),
            (EncoderSettings(maxrate: 4_000_000, bufsize: 8_000_000), PictureSettings()),
        ]
        for (settings, picture) in cases {
            #expect(refusal { try resolve("720", source, settings: settings, picture: picture) }?.code == .conflictingOption)
        }
    }

    // MARK: Names

    @Test func rungsNameTheirOutputs() {
        let rung = Ladder.Rung(height: 720)
        #expect(rung.name == "720p")
        #expect(rung.outputPath(for: "out.mp4") == "out_720p.mp4")
        #expect(rung.outputPath(for: "/srv/v.2/out.mp4") == "/srv/v.2/out_720p.mp4")
        #expect(rung.outputPath(for: "/srv/v.2/out") == "/srv/v.2/out_720p")
        #expect(rung.outputPath(for: "clip.final.mov") == "clip.final_720p.mov")
        #expect(rung.outputPath(for: "dir/.mp4") == "dir/.mp4_720p")
    }
}
