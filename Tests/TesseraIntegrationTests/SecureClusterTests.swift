import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraStore
import TesseraTestSupport
import ZMQKit

/// A cluster only its own workers can join: CURVE keys, the authorized keys file, results bound to leases.
/// Real coordinator and worker processes on loopback, with keys made by `tessera keygen`.
@Suite(.serialized) struct SecureClusterTests {
    /// A video-only clip, so that every byte of its `mdat` is sent to the workers.
    static func videoOnlyInput() throws -> String {
        try Fixtures.media("secure-video.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "6",
                                                "-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-bf", "2"])
    }

    static func frameExact(_ source: String, _ output: String) throws -> Bool {
        let check = try FrameCheck.compare(source: source, output: output, width: 320, height: 240)
        return check.outputFrames == check.sourceFrames && check.minimumPSNR > FrameCheck.psnrFloor
    }

    /// Leases in the job's events, by worker.
    static func leasedTo(_ events: [JobEvent]) -> Set<String> { Set(events.compactMap(\.worker)) }

    @Test func aTCPCoordinatorOrWorkerWithoutKeysRefusesToStartUnlessInsecure() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        let coordinator = try Tool.run(cluster.binary, ["coordinator", "--bind", cluster.endpoint] + cluster.db)
        #expect(coordinator.status == 1)
        #expect(coordinator.stderr == "tessera: coordinator: \(cluster.endpoint) needs --key and --authorized-keys (see `tessera keygen`), or --insecure for plaintext\n")
        let worker = try Tool.run(cluster.binary, ["worker", "--connect", cluster.endpoint])
        #expect(worker.status == 1)
        #expect(worker.stderr.hasSuffix("or --insecure for a plaintext coordinator\n") && worker.stderr.split(separator: "\n").count == 1)
        let missing = try Tool.run(cluster.binary, ["coordinator", "--bind", cluster.endpoint, "--key", "/nonexistent.key",
                                                    "--authorized-keys", "/nonexistent"] + cluster.db)
        #expect(missing.status == 1 && missing.stderr == "tessera: /nonexistent.key: No such file or directory\n")

        try cluster.startCoordinator()
        Thread.sleep(forTimeInterval: 1.5)
        #expect(cluster.coordinator?.isRunning == true, "--insecure runs")
        #expect(cluster.log("coordinator.log").contains("insecure: no encryption"))
    }

    /// Only a listed key gets leases; a worker with an unlisted key and one with none get nothing and say why.
    @Test func onlyWorkersWithAListedKeyGetWork() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.secure()
        let allowed = try cluster.keygen("allowed"), stranger = try cluster.keygen("stranger")
        try cluster.authorize([allowed])
        try cluster.startCoordinator()
        try cluster.startWorker("stranger", key: stranger)
        try cluster.startWorker("keyless")
        try cluster.startWorker("allowed", key: allowed)
        let source = try Self.videoOnlyInput()
        let output = cluster.directory.appendingPathComponent("out.mp4").path
        let job = try cluster.submit(source, output)
        let record = try cluster.wait(job)
        #expect(record.state == .done, "\(record.error ?? "")")
        #expect(try Self.frameExact(source, output))
        let store = try cluster.openStore()
        defer { store.close() }
        #expect(Self.leasedTo(try store.events(job)) == ["allowed"])
        // The others may not have tried yet when a short job ends: their reasons come within seconds.
        cluster.waitUntil(timeout: 10) {
            cluster.log("stranger.log").contains("refused this worker's key") && cluster.log("keyless.log").contains("requires CURVE keys")
        }
        #expect(cluster.log("stranger.log").contains("the coordinator refused this worker's key \(try cluster.publicKey(stranger))"))
        #expect(cluster.log("keyless.log").contains("the coordinator requires CURVE keys"))
        let refusals = cluster.log("coordinator.log").components(separatedBy: "refused a worker whose key is not authorized")
        #expect(refusals.count == 2, "the stranger's key is logged once however often it retries")
        #expect(cluster.log("coordinator.log").contains(try cluster.publicKey(stranger)))

        // SIGHUP reads the file again, even when its size and time say it did not change: the stranger's
        // key in place of the allowed one, with the same length and the old modification time.
        let path = cluster.keys!.authorized
        var before = stat()
        stat(path, &before)
        try (try cluster.publicKey(stranger) + " allowed\n").write(toFile: path, atomically: false, encoding: .utf8)
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        Thread.sleep(forTimeInterval: 1.5)
        #expect(!cluster.log("coordinator.log").contains("keys.added=1 keys.removed=1"), "the same size and time: not read again by itself")
        kill(cluster.coordinator!.processIdentifier, SIGHUP)
        cluster.waitUntil(timeout: 5) { cluster.log("coordinator.log").contains("keys.added=1 keys.removed=1") }
        #expect(cluster.log("coordinator.log").contains("keys.added=1 keys.removed=1"))
    }

    /// A worker id stays with the key it first joined with: another listed key under that id is refused.
    @Test func aWorkerIDStaysWithItsFirstKey() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.secure()
        let first = try cluster.keygen("first"), second = try cluster.keygen("second")
        try cluster.authorize([first, second])
        try cluster.startCoordinator()
        try cluster.startWorker("w", key: first)
        cluster.waitUntil(timeout: 10) { cluster.log("coordinator.log").contains("worker.id=w worker.slots") }
        cluster.workers["w"]?.terminate()
        cluster.workers["w"]?.waitUntilExit()
        try cluster.startWorker("w", key: second)
        try cluster.startWorker("other", key: second)
        let source = try Self.videoOnlyInput()
        let output = cluster.directory.appendingPathComponent("out.mp4").path
        let job = try cluster.submit(source, output)
        #expect(try cluster.wait(job).state == .done)
        let store = try cluster.openStore()
        defer { store.close() }
        #expect(Self.leasedTo(try store.events(job)) == ["other"], "the second key gets nothing under the first key's id")
        #expect(cluster.log("coordinator.log").contains("refused a worker whose id belongs to another key"))
        // The refused worker says why; the other one says it joined.
        #expect(cluster.log("w.log").contains("the coordinator refused this worker: this worker's id joined the coordinator first with another key"),
                "\(cluster.log("w.log"))")
        #expect(cluster.log("other.log").contains("joined the coordinator"))
    }

    /// What crosses the wire: none of 40 runs of the input's packet bytes with CURVE; most of them without.
    @Test func aCaptureOfASecureJobHoldsNoneOfTheInputsBytes() throws {
        let source = try Self.videoOnlyInput()
        let input = try Data(contentsOf: URL(fileURLWithPath: source))
        let mdat = try #require(Self.payloadRange(of: "mdat", in: input))
        let runs = (0..<40).map { _ in
            let start = Int.random(in: mdat.lowerBound..<(mdat.upperBound - 32))
            return input[start..<(start + 32)]
        }
        func captured(secure: Bool) throws -> Int {
            let cluster = try Cluster()
            defer { cluster.shutdown() }
            if secure {
                try cluster.secure()
                let worker = try cluster.keygen("w")
                try cluster.authorize([worker])
                try cluster.startCoordinator()
                try cluster.startWorker("w", key: worker)
            } else {
                try cluster.startCoordinator()
                try cluster.startWorker("w")
            }
            let capture = cluster.directory.appendingPathComponent("wire.pcap").path
            let tcpdump = try Self.startCapture(port: cluster.port, to: capture)
            let output = cluster.directory.appendingPathComponent("out.mp4").path
            let record = try cluster.wait(try cluster.submit(source, output))
            Thread.sleep(forTimeInterval: 0.5)
            Self.stop(tcpdump)
            #expect(record.state == .done, "\(record.error ?? "")")
            let wire = try Data(contentsOf: URL(fileURLWithPath: capture))
            #expect(wire.count > input.count / 2, "the capture saw the job's traffic")
            return runs.filter { wire.range(of: $0) != nil }.count
        }
        let plaintext = try captured(secure: false)
        #expect(plaintext >= 30, "without CURVE the input's bytes are on the wire (\(plaintext) of 40 found): the check can fail")
        let encrypted = try captured(secure: true)
        #expect(encrypted == 0, "\(encrypted) of 40 runs of the input found in a CURVE job's traffic")
    }

    /// A key removed while its worker is mid-segment: within 5 s it gets nothing more; the job still completes.
    @Test func revokingAKeyMidJobStopsItsWorkerWithinFiveSeconds() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.secure()
        let a = try cluster.keygen("a"), b = try cluster.keygen("b")
        try cluster.authorize([a, b])
        try cluster.startCoordinator()
        try cluster.startWorker("a", key: a)
        try cluster.startWorker("b", key: b)
        // Noisy 640x360 at medium in 2 s segments: each takes seconds, so the revocation (read within a
        // second of the change) lands while worker a encodes.
        let source = try Fixtures.media("secure-revoke.mp4", ["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25", "-t", "8",
                                                              "-vf", "noise=alls=40:allf=t", "-c:v", "libx264", "-preset", "veryfast", "-g", "25"])
        let output = cluster.directory.appendingPathComponent("out.mp4").path
        let job = try cluster.submit(source, output, ["--preset", "medium", "--segment-seconds", "2"])
        let store = try cluster.openStore()
        defer { store.close() }
        try cluster.waitUntil(timeout: 30) { try !store.leases(worker: "a").isEmpty }
        try #require(try !store.leases(worker: "a").isEmpty, "worker a never got a segment")
        try cluster.authorize([b])
        let revoked = Date()
        let record = try cluster.wait(job)
        #expect(record.state == .done, "\(record.error ?? "")")
        let check = try FrameCheck.compare(source: source, output: output, width: 640, height: 360)
        // Heavy noise at CRF 23 scores 33-35 dB where segments start, by where the plan cuts (it follows the
        // workers connected); a dropped, repeated or shifted frame of noise scores about 11 dB.
        #expect(check.outputFrames == check.sourceFrames && check.minimumPSNR > 30, "minimum PSNR \(check.minimumPSNR) dB")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let lateLeases = try store.events(job).filter { $0.worker == "a" && (formatter.date(from: $0.at) ?? .distantPast) > revoked.addingTimeInterval(5) }
        #expect(lateLeases.isEmpty, "worker a was leased \(lateLeases.count) segments more than 5 s after its key went")
        #expect(cluster.log("coordinator.log").contains("worker's key revoked, its leases return"))
        let history = try store.events(job).filter { $0.segmentIndex != nil }.map { "\($0.at) \($0.segmentIndex!) \($0.from ?? "") -> \($0.to) \($0.detail ?? "")" }
        #expect(try store.events(job).contains { $0.from == "leased" && $0.to == "pending" && $0.detail == "worker a: its key was revoked" },
                "the segment it was encoding went back to pending; revoked at \(revoked): \(history.joined(separator: "; "))\n\(cluster.log("coordinator.log"))")
    }

    /// A rogue peer with a listed key: a forged token, a result from a peer that holds no lease, and 20
    /// copies of an accepted result are refused, named in the events, and not written to the spool.
    @Test func forgedStaleAndDuplicateResultsAreRefusedAndNamed() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.secure()
        let rogue = try cluster.keygen("rogue"), other = try cluster.keygen("other"), good = try cluster.keygen("good")
        try cluster.authorize([rogue, other, good])
        try cluster.startCoordinator()
        Thread.sleep(forTimeInterval: 0.5)
        let context = try ZMQContext()
        defer { context.close() }
        func connect(_ key: String, id: String) throws -> ZMQSocket {
            let socket = try ZMQSocket(context, .dealer)
            try socket.setRoutingID(Array(id.utf8))
            let pair = try #require(CurveKeyPair(secretKey: try KeyFiles.SecretKey(parsing: String(contentsOfFile: key + ".key", encoding: .utf8)).secretKey))
            try socket.setCurveClient(serverKey: try cluster.publicKey(cluster.keys!.coordinator), keys: pair)
            try socket.connect(cluster.endpoint)
            return socket
        }
        let rogueSocket = try connect(rogue, id: "rogue"), otherSocket = try connect(other, id: "other")
        defer { rogueSocket.close(); otherSocket.close() }
        try rogueSocket.send(ClusterMessage.ready(.init(workerID: "rogue", host: "test", slots: 1, capabilities: EngineInfo.libraryVersions)).frames())

        let source = try Self.videoOnlyInput()
        let output = cluster.directory.appendingPathComponent("out.mp4").path
        let job = try cluster.submit(source, output)
        var task: (ClusterMessage.TaskHeader, [UInt8])?
        let deadline = Date().addingTimeInterval(30)
        while task == nil, Date() < deadline {
            guard let frames = try rogueSocket.receive(timeout: 0.1), let message = try? ClusterMessage(frames: frames) else { continue }
            if message == .heartbeat { try rogueSocket.send(ClusterMessage.heartbeat.frames()) }
            if case .task(let header, let payload) = message { task = (header, payload) }
        }
        let (header, payload) = try #require(task)
        let (encoded, checksum) = try SegmentEncoder.encode(try SegmentTask(serialized: payload)).serializedWithChecksum()
        func result(token: String) -> [[UInt8]] {
            ClusterMessage.result(.init(segment: header.segment, attempt: header.attempt, token: token, checksum: checksum), payload: encoded).frames()
        }
        try rogueSocket.send(result(token: "forged"))
        try otherSocket.send(result(token: header.token))
        try rogueSocket.send(result(token: header.token))
        for _ in 0..<20 { try rogueSocket.send(result(token: header.token)) }

        let store = try cluster.openStore()
        defer { store.close() }
        let refusals = { try store.events(job).filter { $0.to == "refused" && $0.segmentIndex == header.segment.index } }
        // The 20 duplicates: the first recorded at once, the other 19 as one event when the interval ends.
        try cluster.waitUntil(timeout: 20) { try refusals().count >= 4 }
        let details = try refusals().compactMap(\.detail)
        #expect(details.filter { $0 == "worker rogue: result refused: its lease token is not the lease's (a result of an earlier lease, or forged)" }.count == 1)
        #expect(details.filter { $0 == "worker other: result refused: not from a connected worker" }.count == 1)
        let duplicates = details.filter { $0.hasPrefix("worker rogue: result refused: the worker holds no lease on this segment") }
        #expect(duplicates.count == 2 && duplicates.last?.hasSuffix("(19 times)") == true, "\(duplicates)")
        // The genuine result is recorded by the spooler, after it is checked and spooled.
        try cluster.waitUntil(timeout: 10) { try store.segments(job).first { $0.index == header.segment.index }?.state == .done }
        let done = try #require(try store.segments(job).first { $0.index == header.segment.index })
        #expect(done.state == .done, "the one genuine result counts")
        let spool = try #require(done.resultPath)
        let spooled = try FileManager.default.attributesOfItem(atPath: spool)[.size] as? Int
        #expect(spooled == Int(done.resultOffset) + encoded.count, "one result in the spool, not 21")

        // A flood of refused messages from the listed key: a handful of events and log lines, and the key quarantined.
        let before = try store.events(job).count
        for _ in 0..<10_000 {
            try rogueSocket.send(ClusterMessage.failure(.init(segment: header.segment, attempt: 1, token: "forged", error: "x")).frames())
        }
        cluster.waitUntil(timeout: 20) { cluster.log("coordinator.log").contains("worker quarantined") }
        Thread.sleep(forTimeInterval: 1)
        let added = try store.events(job).count - before
        #expect(added >= 1 && added <= 4, "\(added) events for 10,000 refused messages")
        #expect(try store.events(job).contains { $0.detail?.hasPrefix("worker rogue: quarantined: 100 refused messages") == true })
        let lines = cluster.log("coordinator.log").split(separator: "\n").filter { $0.contains("rogue") }.count
        #expect(lines < 20, "\(lines) log lines name the rogue worker")
        rogueSocket.close()
        try cluster.startWorker("good", key: good)
        let record = try cluster.wait(job)
        #expect(record.state == .done, "\(record.error ?? "")")
        #expect(try Self.frameExact(source, output))
    }

    // MARK: Helpers

    /// The bytes inside the first top-level box of `type`.
    static func payloadRange(of type: String, in file: Data) -> Range<Int>? {
        var offset = 0
        while offset + 8 <= file.count {
            var size = file[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            var header = 8
            if size == 1 { size = file[(offset + 8)..<(offset + 16)].reduce(0) { $0 << 8 | Int($1) }; header = 16 }
            if size == 0 { size = file.count - offset }
            guard size >= header else { return nil }
            if String(decoding: file[(offset + 4)..<(offset + 8)], as: UTF8.self) == type { return (offset + header)..<(offset + size) }
            offset += size
        }
        return nil
    }

    /// Stops tcpdump (each packet is already written: -U), killing it if it does not go within 5 s.
    static func stop(_ tcpdump: Process) {
        kill(tcpdump.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while tcpdump.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if tcpdump.isRunning { kill(tcpdump.processIdentifier, SIGKILL) }
        tcpdump.waitUntilExit()
    }

    /// tcpdump on loopback, writing every packet to or from `port`, started once it is listening.
    static func startCapture(port: Int, to path: String) throws -> Process {
        let tcpdump = Process()
        tcpdump.executableURL = URL(fileURLWithPath: "/usr/bin/tcpdump")
        tcpdump.arguments = ["-i", "lo", "-U", "-s", "0", "-w", path, "tcp port \(port)"]
        let errors = Pipe()
        tcpdump.standardError = errors
        tcpdump.standardOutput = FileHandle.nullDevice
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tcpdump") else {
            throw ToolError("tcpdump is not installed (bash .ci/run installs it)")
        }
        try tcpdump.run()
        // It says "listening on lo" once the capture runs.
        var said = Data()
        let deadline = Date().addingTimeInterval(10)
        while !String(decoding: said, as: UTF8.self).contains("listening"), Date() < deadline, tcpdump.isRunning {
            said += errors.fileHandleForReading.availableData
        }
        guard tcpdump.isRunning else { throw ToolError("tcpdump: \(String(decoding: said, as: UTF8.self))") }
        return tcpdump
    }
}
