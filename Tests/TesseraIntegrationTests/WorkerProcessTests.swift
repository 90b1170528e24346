import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport
import ZMQKit

/// A real `tessera worker` process, driven from a ROUTER socket over loopback TCP as a coordinator would.
@Suite(.serialized) struct WorkerProcessTests {
    struct Harness {
        let context: ZMQContext
        let router: ZMQSocket
        let process: Process
        let endpoint: String

        init(heartbeat: Double = 1, slots: Int = 1) throws {
            context = try ZMQContext()
            router = try ZMQSocket(context, .router)
            try router.setHandover(true)
            try router.bind("tcp://127.0.0.1:*")
            endpoint = router.lastEndpoint!
            process = Process()
            process.executableURL = URL(fileURLWithPath: Tool.tesseraBinary)
            process.arguments = ["worker", "--connect", endpoint, "--insecure", "--id", "test-worker", "--heartbeat", String(heartbeat),
                                 "--slots", String(slots)]
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        /// The next message from the worker, answering its heartbeats on the way when `keepAlive`.
        func next(timeout: Double = 20, keepAlive: Bool = true, where match: (ClusterMessage) -> Bool) throws -> ClusterMessage? {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                guard let frames = try router.receive(timeout: 0.1) else { continue }
                guard let message = try? ClusterMessage(frames: Array(frames.dropFirst())) else { continue }
                if message == .heartbeat, keepAlive { try router.send([frames[0]] + ClusterMessage.heartbeat.frames()) }
                if match(message) { return message }
            }
            return nil
        }

        func send(_ message: ClusterMessage) throws {
            try router.send([Array("test-worker".utf8)] + message.frames())
        }

        func finish() {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            router.close()
            context.close()
        }
    }

    func tasks(_ kind: SourceKind, segmentSeconds: Double, workers: Int = 2) throws -> [SegmentTask] {
        let plan = try JobPlanner.plan(try MediaProbe.probe(try kind.make()),
                                       options: quickOptions(segmentSeconds: segmentSeconds, workers: workers))
        var tasks: [SegmentTask] = []
        try SegmentSource(plan: plan).forEachTask { tasks.append($0) }
        return tasks.sorted { $0.header.segment.index < $1.header.segment.index }
    }

    @Test func theWorkerEncodesExactlyWhatTheEngineDoes() throws {
        let task = try tasks(.openGOP, segmentSeconds: 1)[2]
        let harness = try Harness()
        defer { harness.finish() }
        let ready = try #require(try harness.next { if case .ready = $0 { return true } else { return false } })
        guard case .ready(let info) = ready else { return }
        #expect(info.workerID == "test-worker")
        #expect(info.capabilities["libavcodec"] != nil && info.capabilities["libx264"] != nil)

        let ref = ClusterMessage.SegmentRef(jobID: task.header.jobID, index: task.header.segment.index)
        try harness.send(.task(.init(segment: ref, attempt: 1, token: "t1"), payload: task.serialized()))
        let reply = try #require(try harness.next { $0.segment == ref })
        guard case .result(let header, let payload) = reply else {
            Issue.record("expected a result, got \(reply)")
            return
        }
        #expect(header.checksum == PayloadChecksum.hex(PayloadChecksum.value(Array(payload.dropLast(8)))))
        let remote = try EncodedSegment(serialized: payload)
        let local = try SegmentEncoder.encode(task)
        #expect(remote.packets == local.packets, "the worker process and the in-process engine give the same bytes")
        #expect(remote.header.extradata == local.header.extradata)
    }

    @Test func sigtermHandsTheTaskBack() throws {
        // 100 frames at the placebo preset keep the worker busy for many seconds.
        var task = try tasks(.singleKeyframe, segmentSeconds: 100, workers: 1)[0]
        task.header.settings.preset = "placebo"
        let harness = try Harness()
        defer { harness.finish() }
        _ = try #require(try harness.next { if case .ready = $0 { return true } else { return false } })
        let ref = ClusterMessage.SegmentRef(jobID: task.header.jobID, index: task.header.segment.index)
        try harness.send(.task(.init(segment: ref, attempt: 1, token: "t1"), payload: task.serialized()))
        // Keep answering heartbeats while the worker encodes.
        _ = try harness.next(timeout: 0.8) { _ in false }
        harness.process.terminate()
        let bye = try #require(try harness.next(timeout: 10) { if case .bye = $0 { return true } else { return false } })
        #expect(bye == .bye(handedBack: [ref]))
        harness.process.waitUntilExit()
        #expect(harness.process.terminationStatus == 0)
    }

    /// Damaged tasks are refused with a failure each, and the worker's memory stays where good work put it:
    /// 10,000 of them leave its resident size within 20 % of its peak on real segments.
    @Test func tenThousandDamagedTasksLeaveTheWorkersMemoryWhereItWas() throws {
        let good = try tasks(.closedGOPWithBFrames, segmentSeconds: 1)
        let harness = try Harness(slots: 4)
        defer { harness.finish() }
        _ = try #require(try harness.next { if case .ready = $0 { return true } else { return false } })
        func run(_ payloads: [[UInt8]], _ refs: [ClusterMessage.SegmentRef]) throws -> (results: Int, failures: Int) {
            var results = 0, failures = 0, sent = 0
            // A few in flight at a time, as a coordinator keeps them.
            while results + failures < payloads.count {
                while sent < payloads.count, sent - results - failures < 4 {
                    try harness.send(.task(.init(segment: refs[sent], attempt: 1, token: "t\(sent)"), payload: payloads[sent]))
                    sent += 1
                }
                guard let reply = try harness.next(where: { if case .result = $0 { true } else if case .failure = $0 { true } else { false } }) else { break }
                if case .result = reply { results += 1 } else { failures += 1 }
            }
            return (results, failures)
        }
        let goodRefs = good.map { ClusterMessage.SegmentRef(jobID: $0.header.jobID, index: $0.header.segment.index) }
        for _ in 0..<3 { #expect(try run(good.map { $0.serialized() }, goodRefs).results == good.count) }
        let peak = try #require(Self.memory(harness.process.processIdentifier, "VmHWM"))

        // Real tasks with damaged packets under a valid checksum (what a peer that forges one sends): the
        // decoder meets garbage; nine in ten also have a broken blob, which fails its checksum.
        var rng = SystemRandomNumberGenerator()
        let damaged = (0..<64).map { n -> [UInt8] in
            var task = good[n % good.count]
            for _ in 0..<8 {
                let p = Int.random(in: 0..<task.packets.count, using: &rng)
                guard !task.packets[p].data.isEmpty else { continue }
                for _ in 0..<16 { task.packets[p].data[Int.random(in: 0..<task.packets[p].data.count, using: &rng)] = .random(in: 0...255, using: &rng) }
            }
            var bytes = task.serialized()
            if n % 10 != 0 { bytes[bytes.count / 2] ^= 0x5A }
            return bytes
        }
        let count = 10_000
        let refs = (0..<count).map { ClusterMessage.SegmentRef(jobID: good[0].header.jobID, index: 1000 + $0) }
        let outcome = try run((0..<count).map { damaged[$0 % damaged.count] }, refs)
        #expect(outcome.results + outcome.failures == count)
        #expect(outcome.failures >= count * 9 / 10, "at least every broken blob is refused")
        let after = try #require(Self.memory(harness.process.processIdentifier, "VmRSS"))
        #expect(Double(after) <= 1.2 * Double(peak), "resident \(after / 1024) MB after \(count) damaged tasks, peak \(peak / 1024) MB on good ones")
    }

    /// A worker takes no more tasks than its slots: of 8 sent at once to a one-slot worker, one is encoded
    /// and 7 come back at once as busy, each under its own lease's token.
    @Test func aOneSlotWorkerHandsBackWhatItCannotTake() throws {
        let task = try tasks(.closedGOPWithBFrames, segmentSeconds: 1)[0]
        let harness = try Harness(slots: 1)
        defer { harness.finish() }
        _ = try #require(try harness.next { if case .ready = $0 { return true } else { return false } })
        let payload = task.serialized()
        let refs = (0..<8).map { ClusterMessage.SegmentRef(jobID: task.header.jobID, index: 100 + $0) }
        let sent = Date()
        for (n, ref) in refs.enumerated() { try harness.send(.task(.init(segment: ref, attempt: 1, token: "t\(n)"), payload: payload)) }
        var busy: [ClusterMessage.LeaseRef] = []
        var answered = 0
        while busy.count + answered < 8, let reply = try harness.next(where: { $0.segment != nil }) {
            if case .busy(let lease) = reply { busy.append(lease) } else { answered += 1 }
            if busy.count == 7 { #expect(Date().timeIntervalSince(sent) < 2, "the hand-backs come at once, not after the encode") }
        }
        #expect(answered == 1 && busy.count == 7)
        #expect(busy.map(\.token) == (1..<8).map { "t\($0)" }, "each names its own lease")
    }

    /// A figure of /proc/PID/status, in kB.
    static func memory(_ pid: Int32, _ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
        return line.flatMap { Int($0.split(whereSeparator: \.isWhitespace)[1]) }
    }

    @Test func aSilentCoordinatorIsLeftAndRejoined() throws {
        let harness = try Harness(heartbeat: 0.2)
        defer { harness.finish() }
        _ = try #require(try harness.next { if case .ready = $0 { return true } else { return false } })
        // No heartbeats back: after 3 intervals the worker reconnects and introduces itself again.
        let again = try harness.next(timeout: 10, keepAlive: false) { if case .ready = $0 { return true } else { return false } }
        #expect(again != nil)
    }
}
