import Dispatch
import Foundation
import Testing
import TesseraCore
import TesseraEngine
@testable import TesseraCluster

/// A job's audio made while its video encodes: the stitch takes it as if it had made it itself.
@Suite(.serialized) struct AudioAheadTests {
    /// A 2 s clip with AAC audio, made by ffmpeg; and its plan.
    static func planned() throws -> (path: String, plan: JobPlan) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-audio-ahead-\(UUID().uuidString).mp4").path
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        ffmpeg.arguments = ["ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25",
                            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "2",
                            "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", path]
        try ffmpeg.run()
        ffmpeg.waitUntilExit()
        try #require(ffmpeg.terminationStatus == 0)
        return (path, try JobPlanner.plan(MediaProbe.probe(path), options: JobOptions(spec: JobSpec(), workers: 2)))
    }

    @Test func theStitchTakesWhatWasMadeAhead() throws {
        let (path, plan) = try Self.planned()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let ahead = AudioAhead(), threads = DispatchGroup()
        ahead.start("a", plan, group: threads, stopping: nil)
        let ready = try #require(ahead.take("a"), "made ahead")
        let made = try #require(ready, "the clip has audio")
        #expect(made.packets.count > 80)
        #expect(made.packets == (try AudioTranscoder.run(plan))?.packets, "what the stitch would have made")
        #expect(ahead.take("a")??.packets == made.packets, "kept for a stitch done again")
        ahead.drop("a")
        if case .some = ahead.take("a") { Issue.record("dropped with its job") }
        if case .some = ahead.take("never started") { Issue.record("nothing made for a job never started") }
        threads.wait()
    }

    @Test func aFailureIsLeftForTheStitchToReport() throws {
        let (path, plan) = try Self.planned()
        try FileManager.default.removeItem(atPath: path)
        let ahead = AudioAhead(), threads = DispatchGroup()
        ahead.start("b", plan, group: threads, stopping: nil)
        if case .some = ahead.take("b") { Issue.record("an input gone makes no audio") }
        #expect(throws: TesseraError.self, "the stitch makes it again, and says why it cannot") { try AudioTranscoder.run(plan) }
        threads.wait()
    }
}
