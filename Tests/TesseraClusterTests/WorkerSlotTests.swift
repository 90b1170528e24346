import Foundation
import Testing
import TesseraCore
import TesseraEngine
import ZMQKit
@testable import TesseraCluster

/// A real `WorkerSession` with one slot, against a bare ROUTER socket playing its coordinator over `inproc://`.
@Suite(.serialized)
struct WorkerSlotTests {
    /// A segment sent again mid-encode replaces its encode in the one slot: every other task is answered
    /// `busy` until the replacement's encode ends, and a task sent after it is taken.
    @Test func aReSentSegmentHoldsTheOneSlotUntilItsEncodeEnds() throws {
        EngineInfo.configureLogging(verbose: false)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-slots-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Two 8 s segments of 320x180 at preset veryslow: each encode lasts seconds, long enough to send tasks into.
        let clip = directory.appendingPathComponent("clip.mp4").path
        try InProcessCluster.tool("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25", "-t", "16",
                                             "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p", clip])
        let options = JobOptions(settings: EncoderSettings(preset: "veryslow"), segmentSeconds: 8)
        let plan = try JobPlanner.plan(try MediaProbe.probe(clip), options: options, jobID: "slots")
        let reader = try SegmentReader(plan: plan)
        let payloads = try plan.cuts.segments.map { try reader.payload(for: $0) }
        try #require(payloads.count >= 2)

        let context = try ZMQContext()
        let coordinator = try ZMQSocket(context, .router)
        let endpoint = "inproc://tessera-slots-\(UUID().uuidString.prefix(8))"
        try coordinator.bind(endpoint)
        let pool = SlotPool(1), stop = CancellationFlag(), failure = Locked<String?>(nil)
        // Heard from every few seconds at most while it encodes: a long liveness keeps it from reconnecting.
        let workerOptions = ClusterWorker.Options(endpoint: endpoint, workerID: "worker-slots", slots: 1, threads: 1,
                                                  heartbeatInterval: 1, liveness: 60)
        let worker = startThread(name: "test-worker-slots") {
            let session = WorkerSession(options: workerOptions, endpoint: endpoint, pool: pool, logger: InProcessCluster.quiet, context: context)
            do throws(ZMQError) { try session.run(stop: stop) } catch { failure.withValue { $0 = "\(error)" } }
        }
        defer {
            stop.cancel()
            worker.wait()
            try? coordinator.setLinger(milliseconds: 0)
            coordinator.close()
            context.close()
        }
        let identity = Array("worker-slots".utf8)
        func send(_ segment: Int, _ token: String) throws {
            let header = ClusterMessage.TaskHeader(segment: .init(jobID: "slots", index: segment), attempt: 0, token: token)
            try coordinator.send([identity] + ClusterMessage.task(header, payload: payloads[segment]).frames())
        }
        /// The next message from the worker within `seconds`, with the lease token it carries.
        func next(within seconds: Double) throws -> (message: ClusterMessage, token: String?)? {
            let deadline = Date().addingTimeInterval(seconds)
            while deadline.timeIntervalSinceNow > 0 {
                guard let frames = try coordinator.receive(timeout: max(deadline.timeIntervalSinceNow, 0.001)) else { return nil }
                let message = try ClusterMessage(frames: Array(frames.dropFirst()))
                switch message {
                case .busy(let lease): return (message, lease.token)
                case .progress(let progress): return (message, progress.lease.token)
                case .result(let header, _): return (message, header.token)
                case .failure(let failure): return (message, failure.token)
                case .ready, .heartbeat, .task, .cancel, .bye, .refused: continue
                }
            }
            return nil
        }
        /// Waits for a message about `token` that `matches`; nil when none came within `seconds`.
        func waitFor(_ token: String, within seconds: Double, _ matches: (ClusterMessage) -> Bool) throws -> ClusterMessage? {
            let deadline = Date().addingTimeInterval(seconds)
            while let heard = try next(within: deadline.timeIntervalSinceNow) {
                if heard.token == token, matches(heard.message) { return heard.message }
            }
            return nil
        }
        func isBusy(_ message: ClusterMessage) -> Bool { if case .busy = message { true } else { false } }
        func isResult(_ message: ClusterMessage) -> Bool { if case .result = message { true } else { false } }
        func isProgress(_ message: ClusterMessage) -> Bool { if case .progress = message { true } else { false } }

        // The worker joins (the ROUTER drops what it sends to a peer it has not heard from).
        let deadline = Date().addingTimeInterval(30)
        var joined = false
        while !joined, Date() < deadline, let frames = try coordinator.receive(timeout: 1) {
            if case .ready = try ClusterMessage(frames: Array(frames.dropFirst())) { joined = true }
        }
        try #require(joined, "the worker never said ready")

        // Segment 0 under lease "first", then, once it reports progress, again under lease "second".
        try send(0, "first")
        try #require(try waitFor("first", within: 60, isProgress) != nil, "the first encode reported no progress")
        try send(0, "second")

        // Tasks for another segment, one at a time: each answered busy at once, until the replacement's result.
        var refused = 0, replacementDone = false, takenAfter: String?
        while !replacementDone {
            let probe = "probe-\(refused)"
            try send(1, probe)
            var answered = false
            let patience = Date().addingTimeInterval(1)
            while !answered, let heard = try next(within: patience.timeIntervalSinceNow) {
                if heard.token == probe, isBusy(heard.message) { answered = true }
                if heard.token == "second", isResult(heard.message) { replacementDone = true; answered = true }
                #expect(!(heard.token == probe && !isBusy(heard.message)), "\(probe) was taken while the replacement encoded")
            }
            try #require(answered, "\(probe) was taken while the replacement encoded: no busy within 1 s")
            if replacementDone { takenAfter = probe } else { refused += 1 }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(refused >= 2, "the replacement ended before tasks could be sent into it")

        // The task that met the replacement's result was handled after its slot was free (an encode gives its
        // slot back before its result is posted), so it is taken.
        let last = try #require(takenAfter)
        let finished = try waitFor(last, within: 120) { isBusy($0) || isResult($0) }
        #expect(finished.map(isResult) == true, "a task sent after the replacement's end was not taken")
        #expect(pool.used == 0)
        #expect(pool.overGives == 0)
        #expect(failure.current == nil)
    }
}
