import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine

@Suite(.serialized) struct AudioTests {
    func sourceAudio(_ path: String) throws -> (start: Double, duration: Double) {
        let line = try Tool.ffprobe(["-select_streams", "a:0", "-show_entries", "stream=start_time,duration", "-of", "csv=p=0", path])
        let parts = line.split(whereSeparator: { $0 == "," || $0.isNewline }).compactMap { Double($0) }
        return (parts[0], parts[1])
    }

    /// AAC in MP4 is copied; PCM in MOV is encoded to AAC once; both start with video and keep their length.
    @Test(arguments: [SourceKind.closedGOPWithBFrames, .prores])
    func audioStartsWithVideoAndKeepsItsLength(_ kind: SourceKind) throws {
        let source = try kind.make()
        let output = Fixtures.output("audio-\(kind.rawValue).mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let report = try LocalTranscoder().transcode(input: source, output: output, options: quickOptions())
        #expect(report.audioCopied == (kind == .closedGOPWithBFrames))
        let facts = try OutputFacts.read(output)
        let audioStart = try #require(facts.audioStart)
        let audioDuration = try #require(facts.audioDuration)
        #expect(abs(audioStart - facts.videoStart) <= 1024.0 / 48000, "within one AAC frame")
        let original = try sourceAudio(source)
        #expect(abs(audioDuration - original.duration) <= 0.05, "output \(audioDuration) s, source \(original.duration) s")
    }

    @Test func audioNoneGivesVideoOnly() throws {
        let source = try SourceKind.closedGOPWithBFrames.make()
        let output = Fixtures.output("noaudio.mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        var options = quickOptions()
        options.audio = AudioSettings(mode: .none)
        _ = try LocalTranscoder().transcode(input: source, output: output, options: options)
        #expect(try OutputFacts.read(output).codecs == ["h264"])
    }

    @Test func reencodedAudioFollowsRequestedBitrate() throws {
        let source = try SourceKind.closedGOPWithBFrames.make()
        let output = Fixtures.output("aac96.mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        var options = quickOptions()
        options.audio = AudioSettings(mode: .aac, bitrate: 96_000)
        let report = try LocalTranscoder().transcode(input: source, output: output, options: options)
        #expect(report.audioCopied == false)
        let rate = try Tool.ffprobe(["-select_streams", "a:0", "-show_entries", "stream=bit_rate", "-of", "csv=p=0", output])
        let bits = Double(rate.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(abs(bits - 96_000) < 96_000 * 0.25, "bit_rate \(bits)")
    }
}
