import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraStore
import TesseraTestSupport

/// A cluster of six hosts in network namespaces (`TestBed`): PostgreSQL on one, two coordinators sharing
/// a spool directory, three workers each serving both coordinators with a working directory of its own,
/// CURVE on every link. Faults an operator meets: a worker cut off mid-segment, a coordinator host gone
/// for good, PostgreSQL restarted, a slow and lossy network.
final class MultiHostCluster {
    let bed: TestBed
    let database: BedDatabase
    let spool: URL
    let binary = Tool.tesseraBinary
    let keys: URL
    /// Seconds between heartbeats, and heartbeats missed before a peer is dead.
    static let heartbeat = 0.5, liveness = 3.0
    static let takeoverAfter = 5.0

    init() throws {
        let directory = Fixtures.directory.appendingPathComponent("bed-\(UUID().uuidString.prefix(6))")
        bed = try TestBed(directory: directory)
        do {
            try bed.addHost("pg", number: 1)
            try bed.addHost("c1", number: 11)
            try bed.addHost("c2", number: 12)
            for n in 1...3 { try bed.addHost("w\(n)", number: 20 + n) }
            database = try BedDatabase.start(on: "pg", in: bed)
        } catch {
            bed.tearDown()
            throw error
        }
        spool = directory.appendingPathComponent("spool")
        keys = directory.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        // The coordinators share one key pair (a workers' --coordinator-key names it); each worker has its own.
        var authorized = ""
        for name in ["coordinator", "w1", "w2", "w3"] {
            let made = try Tool.run(binary, ["keygen", keys.appendingPathComponent(name).path])
            guard made.status == 0 else { throw ToolError("keygen: \(made.stderr)") }
            if name != "coordinator" {
                authorized += try String(contentsOf: keys.appendingPathComponent(name + ".pub"), encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines) + " \(name)\n"
            }
        }
        try authorized.write(to: keys.appendingPathComponent("authorized"), atomically: true, encoding: .utf8)
        // w3 finds both coordinators behind one name.
        try bed.resolve([("coordinators", bed.hosts["c1"]!.address), ("coordinators", bed.hosts["c2"]!.address)], on: "w3")
    }

    func endpoint(_ coordinator: String) -> String { "tcp://\(bed.hosts[coordinator]!.address):5555" }

    @discardableResult
    func startCoordinator(_ host: String) throws -> Process {
        try bed.spawn(on: host, [binary, "coordinator", "--id", host, "--bind", endpoint(host), "--database-url", database.url,
                                 "--spool", spool.path, "--heartbeat", "\(Self.heartbeat)", "--takeover-after", "\(Self.takeoverAfter)",
                                 "--key", keys.appendingPathComponent("coordinator.key").path,
                                 "--authorized-keys", keys.appendingPathComponent("authorized").path], log: "\(host).log")
    }

    /// Starts w1-w3; by default each serves both coordinators (w3 through the name both resolve to).
    func startWorkers(slots: Int = 1, connect: [String]? = nil) throws {
        for n in 1...3 {
            let name = "w\(n)"
            let connect = connect ?? (n == 3 ? ["--connect", "tcp://coordinators:5555"]
                : ["--connect", endpoint("c1"), "--connect", endpoint("c2")])
            let home = bed.directory.appendingPathComponent("home-\(name)")
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
            try bed.spawn(on: name, [binary, "worker", "--id", name, "--heartbeat", "\(Self.heartbeat)", "--slots", "\(slots)",
                                     "--key", keys.appendingPathComponent("\(name).key").path,
                                     "--coordinator-key", keys.appendingPathComponent("coordinator.pub").path] + connect,
                          log: "\(name).log", workingDirectory: home)
        }
    }

    /// Starts c1 and the workers, and submits the test clip; the caller closes the store.
    func startJob(slots: Int = 1, seconds: Int = 12) throws -> (source: String, output: String, store: JobStore, job: String) {
        try startCoordinator("c1")
        try startWorkers(slots: slots)
        let source = try MultiHostTests.source(seconds: seconds)
        let output = bed.directory.appendingPathComponent("out.mp4").path
        let store = try database.openStore()
        return (source, output, store, try submit(source, output))
    }

    /// Stops the workers (SIGTERM: they hand their tasks back) and waits for them.
    func stopWorkers() {
        for n in 1...3 { bed.stop(on: "w\(n)") }
    }

    func submit(_ input: String, _ output: String) throws -> String {
        let result = try Tool.run(binary, ["submit", input, "-o", output, "--preset", "veryfast", "--segment-seconds", "2",
                                           "--database-url", database.localURL])
        guard result.status == 0 else { throw ToolError("submit: \(result.stderr)") }
        return result.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func wait(_ job: String, _ store: JobStore, timeout: Double) throws -> JobRecord {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let record = try? store.job(job), record.state.isFinal { return record }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw ToolError("job \(job) did not end in \(timeout) s\n\(diagnostics(job, store))")
    }

    func waitUntil(timeout: Double, _ condition: () throws -> Bool) throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (try? condition()) == true { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }

    func diagnostics(_ job: String, _ store: JobStore) -> String {
        let events = ((try? store.events(job)) ?? []).map { "\($0.at) \($0.segmentIndex ?? -1) \($0.from ?? "") -> \($0.to) \($0.detail ?? "")" }
        return (["c1", "c2", "w1", "w2", "w3"].map { "--- \($0)\n" + String(bed.log("\($0).log").suffix(3000)) } + ["--- events"] + events)
            .joined(separator: "\n")
    }

    /// Segments recorded done more than once: encoded again.
    func encodedTwice(_ job: String, _ store: JobStore) throws -> [Int] {
        let done = try store.events(job).filter { $0.to == "done" }.compactMap(\.segmentIndex)
        return Set(done).filter { k in done.filter { $0 == k }.count > 1 }.sorted()
    }

    func tearDown() {
        database.stop()
        bed.tearDown()
        try? FileManager.default.removeItem(at: bed.directory)
    }
}

@Suite(.serialized, .enabled(if: TestBed.available, "network namespaces need root and iproute2: skipped"))
struct MultiHostTests {
    /// `seconds` (12 unless given) of 640x360 with 2 s GOPs and AAC.
    static func source(seconds: Int = 12) throws -> String {
        try Fixtures.media(seconds == 12 ? "bed-640x360.mp4" : "bed-640x360-\(seconds)s.mp4",
                           ["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=\(seconds)",
                            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)",
                            "-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-keyint_min", "50", "-c:a", "aac", "-shortest"])
    }

    func expectFrameExact(_ source: String, _ output: String) throws {
        let check = try FrameCheck.compare(source: source, output: output, width: 640, height: 360)
        #expect(check.outputFrames == check.sourceFrames, "frames: \(check.outputFrames) of \(check.sourceFrames)")
        #expect(check.maximumTimestampDrift < 0.001)
        #expect(check.minimumPSNR > 30)
    }

    /// A worker's link cut mid-segment: the coordinator hears nothing from it, and its segment is leased
    /// to another worker within heartbeat × liveness + 2 s (the loop's turn and the store's release took 1.1 s on a
    /// loaded CI run). The job comes out frame-exact.
    @Test func aWorkerCutOffMidSegmentLosesItsLease() throws {
        let cluster = try MultiHostCluster()
        defer { cluster.tearDown() }
        let (source, output, store, job) = try cluster.startJob(slots: 2)
        defer { store.close() }
        #expect(try cluster.waitUntil(timeout: 60) { try !store.leases(worker: "w1").isEmpty }, "w1 never got a segment")
        let held = try store.leases(worker: "w1").map(\.index)
        try cluster.bed.link("w1", up: false)
        let cut = Date()
        let bound = MultiHostCluster.heartbeat * MultiHostCluster.liveness + 2
        let releasedAgain = try cluster.waitUntil(timeout: 30) {
            let segments = try store.segments(job)
            return held.allSatisfy { k in segments[k].state == .done || (segments[k].state == .leased && segments[k].workerID != "w1") }
        }
        let after = Date().timeIntervalSince(cut)
        #expect(releasedAgain)
        #expect(after <= bound, "leased again after \(after) s")
        let record = try cluster.wait(job, store, timeout: 120)
        #expect(record.state == .done, "\(record.error ?? "")\n\(cluster.diagnostics(job, store))")
        try expectFrameExact(source, output)
    }

    /// Every process on the job's coordinator host killed, never to return: the other coordinator takes
    /// the job over within --takeover-after + 15 s, keeps the segments already in the shared spool, and
    /// finishes it frame-exact.
    @Test func anotherCoordinatorFinishesTheJobOfADeadOne() throws {
        let cluster = try MultiHostCluster()
        defer { cluster.tearDown() }
        // 15 segments: work is left when c1 dies, however quickly its workers run (at 6 they could all be done).
        let (source, output, store, job) = try cluster.startJob(seconds: 30)
        defer { store.close() }
        #expect(try cluster.waitUntil(timeout: 60) { try store.holds(job, coordinator: "c1") && store.job(job).state == .encoding })
        try cluster.startCoordinator("c2")
        #expect(try cluster.waitUntil(timeout: 90) { try store.job(job).segmentsDone >= 2 })
        cluster.bed.killEverything(on: "c1")
        let killed = Date()
        let doneBefore = Set(try store.segments(job).filter { $0.state == .done }.map(\.index))
        let record = try cluster.wait(job, store, timeout: MultiHostCluster.takeoverAfter + 90)
        let took = Date().timeIntervalSince(killed)
        #expect(record.state == .done, "\(record.error ?? "")\n\(cluster.diagnostics(job, store))")
        #expect(try store.holds(job, coordinator: "c2"))
        let adopted = try store.events(job).first { $0.to == "adopted" }
        #expect(adopted?.detail?.contains("c2 took the job over from c1") == true)
        let remaining = Double(record.segmentsTotal - doneBefore.count)
        // The bound: the takeover plus 15 s, the issue's figure, with room for the rest's encode on 2 cores.
        #expect(took <= MultiHostCluster.takeoverAfter + 15 + remaining, "took \(took) s")
        let twice = try cluster.encodedTwice(job, store)
        #expect(twice.isEmpty, "segments encoded again: \(twice)")
        try expectFrameExact(source, output)
    }

    /// The job's coordinator cut off the network, still running: the other takes the job over; when the
    /// first is back it lets the job go, and only one output is written, frame-exact.
    @Test func aCoordinatorCutOffLetsItsJobGoWhenItIsBack() throws {
        let cluster = try MultiHostCluster()
        defer { cluster.tearDown() }
        // 30 s of source, and c1 cut off before c2 starts: with 12 s, its workers once finished every segment in the
        // second c2 took to start, and c1 the job itself.
        let (source, output, store, job) = try cluster.startJob(seconds: 30)
        defer { store.close() }
        #expect(try cluster.waitUntil(timeout: 60) { try store.holds(job, coordinator: "c1") && store.job(job).segmentsDone >= 1 })
        try cluster.bed.link("c1", up: false)
        try cluster.startCoordinator("c2")
        #expect(try cluster.waitUntil(timeout: MultiHostCluster.takeoverAfter + 30) { try store.holds(job, coordinator: "c2") },
                "c2 never took the job over\n\(cluster.diagnostics(job, store))")
        try cluster.bed.link("c1", up: true)
        let record = try cluster.wait(job, store, timeout: 120)
        #expect(record.state == .done, "\(record.error ?? "")\n\(cluster.diagnostics(job, store))")
        #expect(try cluster.waitUntil(timeout: 20) { cluster.bed.log("c1.log").contains("letting it go") },
                "c1 never let the job go:\n\(cluster.bed.log("c1.log").suffix(2000))")
        #expect(!cluster.bed.log("c1.log").contains("job done"), "c1 wrote an output for a job it lost")
        try expectFrameExact(source, output)
    }

    /// PostgreSQL restarted mid-job, first fast, then immediately (as a crash): the job completes.
    @Test func aJobSurvivesPostgreSQLRestarts() throws {
        let cluster = try MultiHostCluster()
        defer { cluster.tearDown() }
        try cluster.startCoordinator("c1")
        try cluster.startWorkers()
        let source = try Self.source()
        let output = cluster.bed.directory.appendingPathComponent("out.mp4").path
        let job: String
        do {
            let store = try cluster.database.openStore()
            defer { store.close() }
            job = try cluster.submit(source, output)
            #expect(try cluster.waitUntil(timeout: 60) { try store.job(job).segmentsDone >= 1 })
        }
        try cluster.database.restart(mode: "fast")
        Thread.sleep(forTimeInterval: 2)
        try cluster.database.restart(mode: "immediate")
        let store = try cluster.database.openStore()
        defer { store.close() }
        let record = try cluster.wait(job, store, timeout: 120)
        #expect(record.state == .done, "\(record.error ?? "")\n\(cluster.diagnostics(job, store))")
        try expectFrameExact(source, output)
    }

    /// 50 ms of latency each way and 1 % packet loss on every worker's link: the job completes,
    /// frame-exact, as the same job on the clean network first. (This kernel has no sch_netem: the latency
    /// comes from a relay host that holds the data 50 ms each way, the loss from nftables dropping 1 % of
    /// each worker's packets at random.)
    @Test func aSlowLossyNetworkStillCompletes() throws {
        let cluster = try MultiHostCluster()
        defer { cluster.tearDown() }
        try cluster.bed.addHost("wan", number: 31)
        try cluster.startCoordinator("c1")
        let source = try Self.source()
        let store = try cluster.database.openStore()
        defer { store.close() }
        func transcode(_ name: String) throws {
            let output = cluster.bed.directory.appendingPathComponent(name).path
            let job = try cluster.submit(source, output)
            let record = try cluster.wait(job, store, timeout: 240)
            #expect(record.state == .done, "\(record.error ?? "")\n\(cluster.diagnostics(job, store))")
            try expectFrameExact(source, output)
        }
        try cluster.startWorkers(connect: ["--connect", cluster.endpoint("c1")])
        try transcode("clean.mp4")
        cluster.stopWorkers()
        try cluster.bed.relay(on: "wan", listen: "\(cluster.bed.hosts["wan"]!.address):5555",
                              to: "\(cluster.bed.hosts["c1"]!.address):5555", delay: 0.05)
        for n in 1...3 { try cluster.bed.dropPackets(on: "w\(n)", percent: 1) }
        try cluster.startWorkers(connect: ["--connect", "tcp://\(cluster.bed.hosts["wan"]!.address):5555"])
        try transcode("impaired.mp4")
    }
}
