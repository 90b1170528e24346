import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

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

    /// WMA in ASF (Windows Media): its decoder's last, flushed frame carries no pts, and the source's audio
    /// timeline still ends after it, so the verifier takes the output's full length for the source's.
    @Test func aLastDecodedFrameWithoutTimestampKeepsTheLength() throws {
        let source = try Fixtures.media("windows.wmv", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:d=3", "-f", "lavfi",
                                                       "-i", "sine=f=440:d=3", "-c:v", "wmv2", "-c:a", "wmav2"])
        let output = Fixtures.output("wmv.mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        _ = try LocalTranscoder().transcode(input: source, output: output, options: quickOptions())
        let facts = try OutputFacts.read(output)
        #expect(facts.countedFrames == 75 && facts.codecs == ["h264", "aac"])
        let audioDuration = try #require(facts.audioDuration)
        #expect(abs(audioDuration - 3) <= 0.05, "output \(audioDuration) s of a 3 s tone")
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

    /// A one-second hole in the audio timestamps stays a one-second silence in the same place, so the
    /// rest of the audio keeps its sync with the video.
    @Test func audioTimelineGapsStayInPlace() throws {
        let source = try Fixtures.media("audio-gap.mkv", Fixtures.lavfi + ["-t", "5", "-c:v", "libx264", "-preset", "veryfast", "-g", "25",
                                                                       "-c:a", "aac", "-bsf:a", "setts=ts=TS+if(gte(TS\\,2000)\\,1000\\,0)"])
        let output = Fixtures.output("audio-gap.mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let report = try LocalTranscoder().transcode(input: source, output: output, options: quickOptions())
        #expect(report.audioCopied == false, "a broken timeline is re-encoded, not copied")
        let facts = try OutputFacts.read(output)
        #expect(abs((facts.audioDuration ?? 0) - 6.0) < 0.06, "audio follows the source timeline: \(facts.audioDuration ?? 0) s")
        let detect = try Tool.run("ffmpeg", ["-nostdin", "-i", output, "-map", "0:a", "-af", "silencedetect=n=-50dB:d=0.3", "-f", "null", "-"]).stderr
        func value(_ key: String) -> Double? {
            detect.components(separatedBy: key).dropFirst().first?.split(whereSeparator: { $0 == " " || $0.isNewline }).first.flatMap { Double($0) }
        }
        let start = try #require(value("silence_start: ")), end = try #require(value("silence_end: "))
        #expect(abs(start - 2.0) < 0.06 && abs(end - 3.0) < 0.06, "silence from \(start) to \(end) s")
    }

    /// Broadcast recordings switch between 5.1 and stereo mid-stream; the resampler follows.
    @Test func channelLayoutChangesMidStream() throws {
        let first = try Fixtures.media("surround.ts", Fixtures.lavfi + ["-t", "2", "-c:v", "libx264", "-preset", "veryfast", "-g", "25",
                                                                      "-ac", "6", "-c:a", "ac3"])
        let second = try Fixtures.media("stereo-later.ts", Fixtures.lavfi + ["-t", "2", "-c:v", "libx264", "-preset", "veryfast", "-g", "25",
                                                                           "-ac", "2", "-c:a", "ac3", "-output_ts_offset", "2.08"])
        let joined = Fixtures.directory.appendingPathComponent("layout-switch.ts").path
        if !FileManager.default.fileExists(atPath: joined) {
            _ = FileManager.default.createFile(atPath: joined, contents: try Data(contentsOf: URL(fileURLWithPath: first))
                                           + Data(contentsOf: URL(fileURLWithPath: second)))
        }
        let output = Fixtures.output("layout-switch.mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        _ = try LocalTranscoder().transcode(input: joined, output: output, options: quickOptions())
        let facts = try OutputFacts.read(output)
        #expect(facts.codecs == ["h264", "aac"])
        #expect(abs((facts.audioDuration ?? 0) - 4.0) < 0.1, "\(facts.audioDuration ?? 0) s")
        #expect(facts.decodeErrors.isEmpty)
    }
}
