import Foundation
import Testing
import TesseraCore

/// What `PackagedPresentation.validate()` refuses before anything is written, each with its code and a line naming
/// the rung and segment.
@Suite struct PackagingValidationTests {
    private func refusal(_ presentation: PackagedPresentation) -> PackagingError? {
        do throws(PackagingError) {
            try presentation.validate()
            return nil
        } catch {
            return error
        }
    }

    @Test func theHandComputedLadderIsValid() {
        #expect(refusal(SmallLadder.presentation) == nil)
    }

    @Test func aRungCutAtOtherInstantsIsRefusedNamingRungAndSegment() throws {
        var rung = SmallLadder.main360
        // Segment 2 of 360p ends 4 ticks of 90000 late: segment 3 starts more than 1/30000 s after 720p's.
        rung.track.segments[1].duration += 4
        rung.track.segments[2].duration -= 4
        let error = try #require(refusal(PackagedPresentation(video: [SmallLadder.high720, rung])))
        #expect(error.code == .misalignedSegment)
        #expect(error.description == "rung 360p: segment 3 (segment_00003.m4s) starts at 12.012044 s, 720p at 12.012 s: keyframes must be at the same instants in every rung")
    }

    @Test func oneTickOfTheCoarserTimescaleIsTolerated() {
        var rung = SmallLadder.main360
        // 3 ticks of 90000 are one tick of 30000.
        rung.track.segments[1].duration += 3
        rung.track.segments[2].duration -= 3
        #expect(refusal(PackagedPresentation(video: [SmallLadder.high720, rung])) == nil)
    }

    @Test func aRungEndingElsewhereIsRefused() throws {
        var rung = SmallLadder.main360
        rung.track.segments[2].duration += 3003
        let error = try #require(refusal(PackagedPresentation(video: [SmallLadder.high720, rung])))
        #expect(error.code == .misalignedSegment)
        #expect(error.description.hasPrefix("rung 360p: ends at 14.547867 s, 720p at 14.5145 s"))
    }

    @Test func aRungWithAnotherSegmentCountIsRefused() throws {
        var rung = SmallLadder.main360
        rung.track.segments = SmallLadder.segments([540540, 540540, 112612, 112613], [1, 1, 1, 1])
        let error = try #require(refusal(PackagedPresentation(video: [SmallLadder.high720, rung])))
        #expect(error.code == .segmentCountMismatch)
        #expect(error.description == "rung 360p has 4 segments and 720p has 3: every rung must be cut at the same keyframes")
    }

    @Test func badRenditionsAreRefusedWithTheirCode() throws {
        func code(_ change: (inout PackagedPresentation) -> Void) -> PackagingError.Code? {
            var presentation = SmallLadder.presentation
            change(&presentation)
            return refusal(presentation)?.code
        }
        #expect(code { $0.video = [] } == .noVideo)
        #expect(code { $0.video[1].name = "720p" } == .duplicateName)
        #expect(code { $0.video[1].directory = "audio" } == .duplicateName)
        #expect(code { $0.video[0].name = "7 20p" } == .invalidName)
        #expect(code { $0.video[0].directory = "../up" } == .invalidName)
        #expect(code { $0.video[0].directory = "a b" } == .invalidName)
        #expect(code { $0.video[0].directory = "http:x" } == .invalidName)
        #expect(code { $0.audio?.name = "say \"hi\"" } == .invalidName)
        #expect(code { $0.audio?.language = "en us" } == .invalidName)
        #expect(code { $0.video[0].track.initialization = "a/init.mp4" } == .invalidName)
        #expect(code { $0.video[0].height = 0 } == .invalidRendition)
        #expect(code { $0.video[0].frameRate = Rational(0, 1) } == .invalidRendition)
        #expect(code { $0.audio?.track.timescale = 0 } == .invalidRendition)
        #expect(code { $0.audio?.format.channels = 0 } == .invalidRendition)
        #expect(code { $0.audio?.track.segments = [] } == .emptyRendition)
        #expect(code { $0.audio?.track.segments[0].byteSize = 0 } == .invalidSegment)
        #expect(code { $0.video[0].track.segments[2].iFrame = ByteRange(offset: 450_500, length: 50_001) } == .invalidSegment)
        #expect(code { $0.video[0].decoderConfiguration = [1, 0x64, 0, 0x1F] } == .invalidCodecConfiguration)
        #expect(code { $0.video[0].muxedAudio = AudioFormat(channels: 2, sampleRate: 48000) } == .audioMuxedAndSeparate)
    }

    @Test func writersRefuseWhatValidationRefuses() throws {
        var rung = SmallLadder.main360
        rung.track.segments[0].duration += 300
        let presentation = PackagedPresentation(video: [SmallLadder.high720, rung])
        #expect(throws: PackagingError.self) { try HLSPlaylist.master(presentation) }
        #expect(throws: PackagingError.self) { try HLSPlaylist.files(presentation) }
        #expect(throws: PackagingError.self) { try DASHManifest.render(presentation) }
    }
}

/// The model travels as JSON (a job's record, a task's result) unchanged.
@Suite struct PackagedPresentationCodingTests {
    @Test func aPresentationSurvivesJSON() throws {
        var presentation = SmallLadder.presentation
        presentation.video[1].muxedAudio = AudioFormat(objectType: 29, channels: 2, sampleRate: 44100)
        presentation.video[0].track.startTicks = 2002
        let data = try JSONEncoder().encode(presentation)
        #expect(try JSONDecoder().decode(PackagedPresentation.self, from: data) == presentation)
    }
}
