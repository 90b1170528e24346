import Foundation
import Testing
import TesseraTestSupport

/// A job's tail: 20 s at keyint 250 on two encoders is 250 + 250 + 100 frames; the 100 would run alone, so the plan
/// gives it two libx264 threads and adds no cut, and the output's IDRs are the whole-file encode's.
@Suite struct TailThreadsTests {
    static func source() throws -> String {
        try Fixtures.media("tail-20s-gop250.mp4", ["-f", "lavfi", "-i", "testsrc2=size=192x108:rate=30:duration=20",
                                                  "-c:v", "libx264", "-preset", "ultrafast", "-crf", "12", "-g", "250",
                                                  "-keyint_min", "250", "-sc_threshold", "0"])
    }

    @Test func theTailTakesTwoThreadsAndNoExtraCut() throws {
        let source = try Self.source()
        let probe = try Tool.run(Tool.tesseraBinary, ["probe", source, "--json", "--workers", "2"])
        #expect(probe.status == 0, "\(probe.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: probe.stdout) as? [String: Any])
        let segments = try #require(json["segments"] as? [[String: Any]])
        #expect(segments.map { $0["frames"] as? Int ?? 0 } == [250, 250, 100])
        #expect(segments.map { $0["encoderThreads"] as? Int ?? 1 } == [1, 1, 2])

        let output = Fixtures.output("tail-threads.mp4")
        let run = try Tool.run(Tool.tesseraBinary, ["transcode", source, "-o", output, "-y", "--preset", "veryfast", "--workers", "2"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try OutputFacts.read(output).countedFrames == 600)
        let keyframes = try Tool.ffprobe(["-v", "error", "-select_streams", "v", "-show_entries", "frame=key_frame",
                                          "-of", "csv=p=0", output])
            .split(whereSeparator: \.isNewline).enumerated().filter { $0.element.hasPrefix("1") }.map(\.offset)
        #expect(keyframes == [0, 250, 500], "the whole-file encode's IDRs, none added")
    }
}
