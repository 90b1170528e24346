import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraStore
import TesseraTestSupport
import ZMQKit

@Suite(.serialized) struct ClusterTests {
    /// A connection that presents a live worker's id gets nothing: no task, and the real worker keeps its
    /// leases and finishes the job.
    @Test func aHijackerWithALiveWorkersIDGetsNothing() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator()
        try cluster.startWorker("w")
        let source = try SourceKind.closedGOPWithBFrames.make()
        let output = cluster.directory.appendingPathComponent("out.mp4").path
        let job = try cluster.submit(source, output, ["--preset", "slow"])
        let store = try cluster.openStore()
        defer { store.close() }
        try cluster.waitUntil(timeout: 30) { try !store.leases(worker: "w").isEmpty }
        let context = try ZMQContext()
        defer { context.close() }
        let hijacker = try ZMQSocket(context, .dealer)
        defer { hijacker.close() }
        try hijacker.setRoutingID(Array("w".utf8))
        try hijacker.connect(cluster.endpoint)
        try hijacker.send(ClusterMessage.ready(.init(workerID: "w", host: "elsewhere", slots: 8, capabilities: EngineInfo.libraryVersions)).frames())
        var received: [ClusterMessage] = []
        let until = Date().addingTimeInterval(3)
        while Date() < until {
            if let frames = try hijacker.receive(timeout: 0.1), let message = try? ClusterMessage(frames: frames) { received.append(message) }
            try hijacker.send(ClusterMessage.heartbeat.frames())
        }
        #expect(received.isEmpty, "the hijacker was sent \(received.count) messages")
        #expect(try cluster.wait(job).state == .done)
        let holders = Set(try store.events(job).compactMap(\.worker))
        #expect(holders == ["w"])
        #expect(!cluster.log("coordinator.log").contains("host=elsewhere"))
        let check = try FrameCheck.compare(source: source, output: output, width: 320, height: 240)
        #expect(check.outputFrames == check.sourceFrames)
    }

    /// A job goes to the coordinator it names: a general coordinator on the store of `tessera transcode`
    /// leaves the transcode's job to its private coordinator, and a job submitted for another id alone.
    @Test func aGeneralCoordinatorLeavesJobsMeantForAnother() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator()
        try cluster.startWorker("w")
        let source = try SourceKind.closedGOPWithBFrames.make()
        let transcoded = try Tool.run(cluster.binary, ["transcode", source, "-o", cluster.directory.appendingPathComponent("t.mp4").path,
                                                       "--preset", "veryfast", "--json"] + cluster.db)
        #expect(transcoded.status == 0, "\(transcoded.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: transcoded.stdout) as? [String: Any])
        let transcodeJob = try #require(report["job"] as? String)
        let elsewhere = try cluster.submit(source, cluster.directory.appendingPathComponent("e.mp4").path, ["--coordinator", "another-one"])
        let anyone = try cluster.submit(source, cluster.directory.appendingPathComponent("a.mp4").path)
        #expect(try cluster.wait(anyone).state == .done, "a job that names no coordinator is the general one's")
        let log = cluster.log("coordinator.log")
        #expect(log.contains(anyone), "the log names the jobs it takes (so the checks below can fail)")
        #expect(!log.contains(transcodeJob), "the general coordinator took the transcode's job")
        #expect(!log.contains(elsewhere))
        let store = try cluster.openStore()
        defer { store.close() }
        #expect(try store.job(elsewhere).state == .queued)
    }

    /// Three worker processes give the single-process engine's file, byte for byte.
    @Test func threeWorkersGiveTheSingleProcessOutput() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator()
        for id in ["a", "b", "c"] { try cluster.startWorker(id) }
        let source = try SourceKind.openGOP.make()
        let output = cluster.directory.appendingPathComponent("out.mp4").path
        let job = try cluster.submit(source, output)
        let record = try cluster.wait(job)
        #expect(record.state == .done, "\(record.error ?? "")")
        let local = cluster.directory.appendingPathComponent("local.mp4").path
        _ = try LocalTranscoder().transcode(input: source, output: local, options: JobOptions(
            settings: EncoderSettings(preset: "veryfast"), segmentSeconds: 1, workers: 8))
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data(contentsOf: URL(fileURLWithPath: local)))
        let check = try FrameCheck.compare(source: source, output: output, width: 320, height: 240)
        #expect(check.outputFrames == check.sourceFrames && check.minimumPSNR > FrameCheck.psnrFloor)
        let store = try cluster.openStore()
        defer { store.close() }
        let encoders = Set(try store.events(job).compactMap { $0.to == "leased" ? $0.detail : nil })
        #expect(encoders.count >= 2, "the segments were spread over workers: \(encoders)")
    }

    /// kill -9 of a worker in the middle of a segment: the segment is encoded elsewhere, the job completes.
    @Test func aKilledWorkersSegmentIsEncodedElsewhere() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator()
        try cluster.startWorker("victim")
        let source = try SourceKind.singleKeyframe.make()
        let output = cluster.directory.appendingPathComponent("out.mp4").path
        let job = try cluster.submit(source, output, ["--preset", "slower"])
        let store = try cluster.openStore()
        defer { store.close() }
        try cluster.waitUntil(timeout: 30) { try store.segments(job).contains { $0.state == .leased } }
        cluster.kill9(cluster.workers["victim"])
        let killed = Date()
        try cluster.startWorker("survivor")
        let record = try cluster.wait(job)
        let elapsed = Date().timeIntervalSince(killed)
        #expect(record.state == .done, "\(record.error ?? "")")
        // Within the heartbeat timeout (heartbeat × liveness) plus the time to encode what was left, with slack for
        // process start-up and stitching on a loaded machine.
        let encodeTime = try store.segments(job).compactMap(\.encodeSeconds).reduce(0, +)
        #expect(elapsed < Double(Cluster.liveness)! * Double(Cluster.heartbeat)! + encodeTime + 10, "done \(elapsed) s after the kill; encoding took \(encodeTime) s")
        let events = try store.events(job)
        #expect(events.contains { $0.detail?.contains("victim went silent") == true })
        let check = try FrameCheck.compare(source: source, output: output, width: 320, height: 240)
        #expect(check.outputFrames == check.sourceFrames && check.minimumPSNR > FrameCheck.psnrFloor)
    }

    /// kill -9 of the coordinator in the middle of a job, then a restart: the job completes, and no
    /// segment that was done before the kill is encoded again.
    @Test func aRestartedCoordinatorResumesWithoutRedoingWork() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator()
        try cluster.startWorker("w")
        let source = try SourceKind.singleKeyframe.make()
        let output = cluster.directory.appendingPathComponent("out.mp4").path
        let job = try cluster.submit(source, output, ["--preset", "slow"])
        let store = try cluster.openStore()
        defer { store.close() }
        try cluster.waitUntil(timeout: 60) { try store.job(job).segmentsDone >= 2 }
        cluster.kill9(cluster.coordinator)
        let doneBefore = Set(try store.segments(job).filter { $0.state == .done }.map(\.index))
        #expect(doneBefore.count >= 2)
        try cluster.startCoordinator()
        let record: JobRecord
        do { record = try cluster.wait(job) } catch {
            Issue.record("coordinator:\n\(cluster.log("coordinator.log"))\nworker:\n\(cluster.log("w.log"))\nevents:\n\(try store.events(job).map { "\($0.at) \($0.segmentIndex ?? -1) \($0.from ?? "") -> \($0.to) \($0.detail ?? "")" }.joined(separator: "\n"))")
            throw error
        }
        #expect(record.state == .done, "\(record.error ?? "")")
        let encodes = try store.events(job).filter { $0.to == "done" && $0.segmentIndex != nil }
        for index in doneBefore {
            #expect(encodes.filter { $0.segmentIndex == index }.count == 1, "segment \(index) was encoded once")
        }
        let check = try FrameCheck.compare(source: source, output: output, width: 320, height: 240)
        #expect(check.outputFrames == check.sourceFrames)
    }

    /// Garbage, oversized and malformed messages on the coordinator's port are dropped; jobs still run.
    /// Two jobs at once; canceling one leaves the other untouched.
    @Test func garbageIsIgnoredAndJobsRunSideBySide() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        // A send window smaller than a payload: one at a time in libzmq, the others wait for it to leave.
        // Heartbeats 3 s apart (silence after 9 s): under the whole suite on two cores a process can stall for seconds,
        // and a worker taken for silent returns its placebo leases, whose late results are then refused; that is not what
        // this test looks at.
        let calm = ["--heartbeat", "3"]
        try cluster.startCoordinator(["--send-window", "0.001"] + calm)
        Thread.sleep(forTimeInterval: 1)
        // Raw bytes, then well-formed ZeroMQ carrying things that are not Tessera messages.
        for _ in 0..<3 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(cluster.port).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            let junk = (0..<4096).map { _ in UInt8.random(in: 0...255) }
            _ = junk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        let context = try ZMQContext()
        let rogue = try ZMQSocket(context, .dealer)
        try rogue.connect(cluster.endpoint)
        try rogue.send([Array("TSR".utf8) + [1, 3] + Array("{}".utf8)])
        try rogue.send([[0xFF, 0x00], []])
        try rogue.send([Array("TSR".utf8) + [1, 1] + Array(#"{"workerID":"x","host":"h","slots":1,"capabilities":{}}"#.utf8)])
        try rogue.send(ClusterMessage.result(.init(segment: .init(jobID: "nope", index: 0), attempt: 1, token: "0", checksum: "0"), payload: [1, 2]).frames())
        rogue.close()
        // A worker of the release before (wire version 2) is told why it gets nothing, naming both versions.
        let older = try ZMQSocket(context, .dealer)
        try older.setRoutingID(Array("older".utf8))
        try older.connect(cluster.endpoint)
        try older.send([Array("TSR".utf8) + [2, 1] + Array(#"{"workerID":"older","host":"h","slots":1,"capabilities":{},"inFlight":[]}"#.utf8)])
        let reply = try #require(try older.receive(timeout: 5))
        guard case .refused(let refusal) = try ClusterMessage(frames: reply) else { throw ToolError("not a refusal: \(reply)") }
        #expect(refusal.reason == .wireVersion)
        #expect(refusal.detail.contains("version \(ClusterMessage.version)") && refusal.detail.contains("this worker 2"), "\(refusal.detail)")
        older.close()
        context.close()
        #expect(cluster.log("coordinator.log").contains("speaking wire protocol version 2; this coordinator speaks \(ClusterMessage.version)"))

        for id in ["a", "b"] { try cluster.startWorker(id, calm) }
        // The inputs first (making one can take seconds). The placebo job is long (30 s of one GOP), so that it still
        // encodes when the other two have been submitted, however slowly a loaded machine runs `submit`.
        let sources = (long: try Fixtures.media("single-idr-30s.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=30",
                                                                       "-c:v", "libx264", "-preset", "veryfast", "-g", "1000",
                                                                       "-keyint_min", "1000", "-sc_threshold", "0"]),
                       short: try SourceKind.closedGOPWithBFrames.make(), other: try SourceKind.hevc.make())
        let long = try cluster.submit(sources.long, cluster.directory.appendingPathComponent("long.mp4").path, ["--preset", "placebo"])
        let store = try cluster.openStore()
        defer { store.close() }
        // The others come once a worker encodes one of its segments (planning alone takes seconds on a loaded machine).
        let encoding = { try store.segments(long).contains { $0.state == .leased } }
        try cluster.waitUntil(timeout: 120) { try encoding() }
        #expect(try encoding(), "the placebo job encodes")
        let short = try cluster.submit(sources.short, cluster.directory.appendingPathComponent("short.mp4").path)
        let other = try cluster.submit(sources.other, cluster.directory.appendingPathComponent("other.mp4").path)
        #expect(try store.job(long).state == .encoding, "the placebo job is canceled while it encodes")
        let canceled = try Tool.run(cluster.binary, ["cancel", long] + cluster.db)
        #expect(canceled.status == 0)
        #expect(try cluster.wait(short).state == .done)
        #expect(try cluster.wait(other).state == .done)
        #expect(try cluster.wait(long).state == .canceled)
        #expect(!FileManager.default.fileExists(atPath: cluster.directory.appendingPathComponent("long.mp4").path))
        #expect(try OutputFacts.read(cluster.directory.appendingPathComponent("short.mp4").path).countedFrames == 150)
        #expect(cluster.coordinator?.isRunning == true)
        // The cancel reached the workers: the placebo encodes stopped, so a new job runs at once.
        let after = try cluster.submit(try SourceKind.closedGOPWithBFrames.make(), cluster.directory.appendingPathComponent("after.mp4").path)
        #expect(try cluster.wait(after, timeout: 20).state == .done)
        // A cancel is a cancel: no refusal at the coordinator, no failed segment at a worker.
        let aboutLong = { (log: String) in log.split(separator: "\n").filter { $0.contains(long) } }
        let refusals = aboutLong(cluster.log("coordinator.log")).filter { $0.contains("refused") }
        #expect(refusals.isEmpty, "\(refusals)")
        for id in ["a", "b"] { #expect(!aboutLong(cluster.log("\(id).log")).contains { $0.contains("segment failed") }) }
    }

    /// A worker that joins mid-job takes segments; one stopped with SIGTERM hands its task back, which
    /// is encoded elsewhere without counting a failed attempt.
    @Test func workersJoinAndLeaveMidJob() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator()
        try cluster.startWorker("first")
        let source = try SourceKind.singleKeyframe.make()
        let output = cluster.directory.appendingPathComponent("out.mp4").path
        let job = try cluster.submit(source, output, ["--preset", "veryslow"])
        let store = try cluster.openStore()
        defer { store.close() }
        func leasedTo(_ worker: String) throws -> [Int] {
            try store.segments(job).filter { $0.state == .leased && $0.workerID == worker }.map(\.index)
        }
        try cluster.waitUntil(timeout: 30) { try !leasedTo("first").isEmpty }
        try cluster.startWorker("second")
        try cluster.waitUntil(timeout: 30) { try !leasedTo("second").isEmpty }
        #expect(try !leasedTo("second").isEmpty, "the new worker took a segment")

        let handedBack = try leasedTo("first")
        cluster.workers["first"]?.terminate()
        cluster.workers["first"]?.waitUntilExit()
        #expect(cluster.workers["first"]?.terminationStatus == 0)
        try cluster.startWorker("third")
        let record = try cluster.wait(job)
        #expect(record.state == .done, "\(record.error ?? "")")
        let events = try store.events(job)
        let segments = try store.segments(job)
        for index in handedBack {
            let returns = events.filter { $0.segmentIndex == index && $0.from == "leased" && $0.to == "pending" }
            // Its result may have reached the coordinator's spool just before the SIGTERM (the store then still
            // said leased): then the first worker's encode is the one kept, and nothing went back.
            let keptFirsts = segments.first { $0.index == index }?.workerID == "first" && returns.isEmpty
            #expect(!returns.isEmpty || keptFirsts, "segment \(index) went back")
        }
        #expect(segments.filter { handedBack.contains($0.index) }.allSatisfy { $0.attempts == 0 },
                "a hand-back is not a failed attempt")
        #expect(try OutputFacts.read(output).countedFrames == 200)
    }

    /// A worker whose encoder produces other SPS/PPS (another libx264 build) has its result refused,
    /// with the reason logged in the segment's history; the segment is encoded by another worker.
    @Test func aResultWithOtherHeadersIsRefused() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator()
        let context = try ZMQContext()
        defer { context.close() }
        let rogue = try ZMQSocket(context, .dealer)
        defer { rogue.close() }
        try rogue.setRoutingID(Array("odd-build".utf8))
        try rogue.connect(cluster.endpoint)
        try rogue.send(ClusterMessage.ready(.init(workerID: "odd-build", host: "test", slots: 1, capabilities: ["libx264": "999"])).frames())

        let source = try SourceKind.closedGOPWithBFrames.make()
        let output = cluster.directory.appendingPathComponent("out.mp4").path
        let job = try cluster.submit(source, output)
        // Take one task, encode it with another profile (different SPS), send it back.
        var refused: ClusterMessage.SegmentRef?
        let deadline = Date().addingTimeInterval(30)
        while refused == nil, Date() < deadline {
            guard let frames = try rogue.receive(timeout: 0.2), let message = try? ClusterMessage(frames: frames) else { continue }
            switch message {
            case .heartbeat:
                try rogue.send(ClusterMessage.heartbeat.frames())
            case .task(let header, let payload):
                var task = try SegmentTask(serialized: payload)
                task.header.settings.profile = "main"
                let (encoded, checksum) = try SegmentEncoder.encode(task).serializedWithChecksum()
                try rogue.send(ClusterMessage.result(.init(segment: header.segment, attempt: header.attempt, token: header.token,
                                                           checksum: checksum), payload: encoded).frames())
                refused = header.segment
            default:
                break
            }
        }
        let ref = try #require(refused)
        try cluster.startWorker("good")
        let record = try cluster.wait(job)
        #expect(record.state == .done, "\(record.error ?? "")")
        let store = try cluster.openStore()
        defer { store.close() }
        let history = try store.events(job).filter { $0.segmentIndex == ref.index }
        #expect(history.contains { $0.to == "pending" && $0.detail?.contains("SPS/PPS from worker odd-build differ") == true })
        #expect(history.contains { $0.to == "leased" && $0.detail == "worker good" })
        #expect(try OutputFacts.read(output).decodeErrors.isEmpty)
    }

    /// Progress moves within a segment: `status --json` counts the frames workers report for tasks in
    /// flight (more than the done segments hold), with a rate and the time left.
    @Test func progressCountsFramesWithinASegment() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        // Heartbeats 3 s apart, as above (progress from a worker taken for silent is ignored); this test also failed with
        // them, when its segments were short: the long segment below is what it needs.
        try cluster.startCoordinator(["--heartbeat", "3"])
        try cluster.startWorker("w", ["--heartbeat", "3"])
        // One keyframe and one segment (the whole 40 s), long enough to be seen mid-encode: planned at the encode's
        // keyframe interval its 10 s segments once finished between two samples, and 24 s at slower ended, under the
        // whole suite, before a sample saw it (progress is recorded at the coordinator's heartbeat, 3 s).
        let source = try Fixtures.media("progress-640x360-40s.mp4", ["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=40",
                                                                 "-c:v", "libx264", "-preset", "ultrafast", "-g", "2000",
                                                                 "-keyint_min", "2000", "-sc_threshold", "0"])
        // Some seconds alone (slower: at slow it once ended, under the whole suite, before a sample saw it mid-segment);
        // a loaded machine stretches it many times over.
        let job = try cluster.submit(source, cluster.directory.appendingPathComponent("out.mp4").path,
                                     ["--preset", "slower", "--segment-seconds", "60"])
        let store = try cluster.openStore()
        defer { store.close() }
        var withinASegment = false, rate: Double?, eta: Double?
        var samples: [String] = []
        cluster.waitUntil(timeout: 300) {
            let status = try? FaultToleranceTests.statusJSON(cluster, job)
            let sample = "\(status?["state"] ?? "no status")/\(status?["framesDone"] ?? "-")"
            if samples.last != sample { samples.append(sample) }
            guard let status, status["state"] as? String == "encoding",
                  let framesDone = status["framesDone"] as? Int else { return (try? store.job(job).state.isFinal) ?? false }
            let doneFrames = ((try? store.segments(job)) ?? []).filter { $0.state == .done }.reduce(0) { $0 + $1.frameCount }
            if framesDone > doneFrames { withinASegment = true }
            rate = rate ?? status["fps"] as? Double
            eta = eta ?? status["etaSeconds"] as? Double
            return withinASegment && rate != nil && eta != nil
        }
        #expect(withinASegment, "framesDone never went past the done segments' frames (state/framesDone seen: \(samples))")
        #expect(rate.map { $0 > 0 } == true, "no fps")
        #expect(eta.map { $0 >= 0 } == true, "no etaSeconds")
        #expect(try cluster.wait(job, timeout: 300).state == .done)
    }
}
