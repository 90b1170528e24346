import Foundation
import Testing
import TesseraCore
import TesseraStore
import TesseraTestSupport

/// What an operator sees: `/metrics`, `/healthz` and `/readyz` of real coordinator and worker processes,
/// scraped over real sockets, and their JSON log lines.
@Suite(.serialized) struct ObservabilityTests {
    /// Starts `tessera worker` with a listener on `port`.
    func startWorker(_ cluster: Cluster, _ id: String, metrics port: Int, _ extra: [String] = []) throws -> Process {
        let worker = try cluster.spawn(["worker", "--connect", cluster.endpoint, "--id", id, "--heartbeat", "0.5", "--liveness", Cluster.liveness, "--insecure",
                                        "--metrics-listen", "127.0.0.1:\(port)"] + extra, log: "\(id).log")
        cluster.workers[id] = worker
        return worker
    }

    /// After a job: segments completed equal the plan's, both workers are connected, the workers' encode
    /// histograms count every segment and their frame counters every frame; the coordinator's log lines are
    /// JSON objects with `job.id` as a key.
    @Test func metricsAfterAJob() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        let coordinatorPort = Cluster.freePort(), workerPorts = [Cluster.freePort(), Cluster.freePort()]
        try cluster.startCoordinator(["--metrics-listen", "127.0.0.1:\(coordinatorPort)", "--log-format", "json"])
        for (n, port) in workerPorts.enumerated() { _ = try startWorker(cluster, "w\(n)", metrics: port, ["--log-format", "json"]) }
        try HTTP.poll(coordinatorPort, "/readyz", status: 200)
        for port in workerPorts { try HTTP.poll(port, "/readyz", status: 200) }

        let source = try SourceKind.closedGOPWithBFrames.make()
        let job = try cluster.submit(source, cluster.directory.appendingPathComponent("out.mp4").path)
        let record = try cluster.wait(job)
        #expect(record.state == .done)
        #expect(record.segmentsTotal >= 2, "a job of several segments, so the counts below mean something")

        let scrape = try HTTP.get(coordinatorPort, "/metrics")
        #expect(scrape.status == 200)
        #expect(scrape.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        let coordinator = HTTP.samples(scrape.body)
        #expect(coordinator["tessera_segments_completed_total"] == Double(record.segmentsTotal))
        #expect(coordinator["tessera_workers_connected"] == 2)
        #expect(coordinator["tessera_jobs{state=\"done\"}"] == 1)
        #expect(coordinator["tessera_jobs{state=\"queued\"}"] == 0)
        #expect(coordinator["tessera_store_up"] == 1)
        #expect((coordinator["tessera_payload_bytes_total{direction=\"sent\"}"] ?? 0) > 0)
        #expect((coordinator["tessera_payload_bytes_total{direction=\"received\"}"] ?? 0) > 0)
        #expect((coordinator["tessera_store_seconds_count"] ?? 0) > 0)
        #expect(coordinator["tessera_results_refused_total{reason=\"wrong_token\"}"] == 0)
        #expect(coordinator["tessera_leases_expired_total"] == 0)
        #expect(coordinator["tessera_store_gauges"] == 1, "the only coordinator serves the store-wide gauges")
        Self.checkExposition(scrape.body, role: "coordinator")

        var encodes = 0.0, frames = 0.0
        var names = Set(coordinator.keys.map { String($0.prefix { $0 != "{" }) })
        for port in workerPorts {
            let worker = HTTP.samples(try HTTP.get(port, "/metrics").body)
            names.formUnion(worker.keys.map { String($0.prefix { $0 != "{" }) })
            encodes += worker["tessera_segment_encode_seconds_count"] ?? 0
            frames += worker["tessera_encoded_frames_total"] ?? 0
            #expect(worker["tessera_worker_busy"] == 0)
            #expect(worker["tessera_worker_connected"] == 1)
            #expect(worker["tessera_segment_encode_seconds_bucket{le=\"1800.0\"}"] == worker["tessera_segment_encode_seconds_count"],
                    "buckets reach 30 minutes")
            Self.checkExposition(try HTTP.get(port, "/metrics").body, role: "worker")
        }
        #expect(encodes == Double(record.segmentsTotal))
        #expect(frames == Double(record.framesTotal))

        // The dashboard shows only what the processes serve.
        let dashboard = try String(contentsOf: Fixtures.repository.appendingPathComponent("deploy/grafana/tessera.json"), encoding: .utf8)
        let used = Set(dashboard.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).filter { $0.hasPrefix("tessera_") }.map(String.init))
        #expect(used.count >= 10)
        #expect(used.subtracting(names).isEmpty, "the dashboard names metrics no process serves: \(used.subtracting(names).sorted())")

        for port in [coordinatorPort] + workerPorts {
            #expect(try HTTP.get(port, "/healthz").status == 200)
            #expect(try HTTP.get(port, "/nowhere").status == 404)
        }

        let lines = cluster.log("coordinator.log").split(separator: "\n")
        #expect(!lines.isEmpty)
        var jobLines = 0
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
            #expect(object["message"] is String && object["level"] is String && object["time"] is String)
            if object["job.id"] as? String == job { jobLines += 1 }
        }
        #expect(jobLines >= 2, "the job's lines carry job.id as a key")
    }

    /// `/readyz` follows what the process can do: a coordinator's goes to 503 when its store stops and back
    /// to 200 when it returns; a worker's is 503 until it hears a coordinator, and again once that is gone.
    @Test func readinessFlips() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        let coordinatorPort = Cluster.freePort(), workerPort = Cluster.freePort()
        _ = try startWorker(cluster, "w", metrics: workerPort)
        let waiting = try HTTP.poll(workerPort, "/readyz", status: 503)
        #expect(waiting.body.contains("not connected"))
        #expect(try HTTP.get(workerPort, "/healthz").status == 200, "alive while not ready")

        try cluster.startCoordinator(["--metrics-listen", "127.0.0.1:\(coordinatorPort)"])
        try HTTP.poll(coordinatorPort, "/readyz", status: 200)
        try HTTP.poll(workerPort, "/readyz", status: 200)

        let stopped = try Tool.run(cluster.binary, ["db", "stop", "--force"] + cluster.db)
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let down = try HTTP.poll(coordinatorPort, "/readyz", status: 503, timeout: 10)
        #expect(down.body.contains("store"))
        #expect(try HTTP.get(coordinatorPort, "/healthz").status == 200)
        let whileDown = HTTP.samples(try HTTP.get(coordinatorPort, "/metrics").body)
        #expect(whileDown["tessera_store_up"] == 0)
        #expect(!whileDown.keys.contains { $0.hasPrefix("tessera_jobs") || $0.hasPrefix("tessera_segments{") }, "nothing stale while the store is down")
        let started = try Tool.run(cluster.binary, ["db", "start"] + cluster.db)
        #expect(started.status == 0, "\(started.stderr)")
        try HTTP.poll(coordinatorPort, "/readyz", status: 200, timeout: 10)

        cluster.kill9(cluster.coordinator)
        let orphaned = try HTTP.poll(workerPort, "/readyz", status: 503, timeout: 10)
        #expect(orphaned.body.contains("not connected"))
    }

    /// Every family has its help line and its type; the build and the process are described.
    static func checkExposition(_ body: String, role: String) {
        let lines = body.split(separator: "\n")
        var helped = Set<Substring>()
        for line in lines {
            if line.hasPrefix("# HELP ") { helped.insert(line.dropFirst(7).prefix { $0 != " " }) }
            if line.hasPrefix("# TYPE ") {
                let name = line.dropFirst(7).prefix { $0 != " " }
                #expect(helped.contains(name), "\(name) has no # HELP line")
            }
        }
        let samples = HTTP.samples(body)
        #expect(samples.contains { $0.key.hasPrefix("tessera_build_info{") && $0.key.contains("role=\"\(role)\"") && $0.value == 1 })
        #expect((samples["process_cpu_seconds_total"] ?? 0) > 0)
        #expect((samples["process_resident_memory_bytes"] ?? 0) > 1_000_000)
        #expect((samples["process_open_fds"] ?? 0) > 2)
        let start = samples["process_start_time_seconds"] ?? 0
        #expect(abs(start - Date().timeIntervalSince1970) < 3600, "started within the hour: \(start)")
    }

    /// Two coordinators of one store: one serves the store-wide gauges, so a dashboard's `sum()` counts each job
    /// once; when it is gone, the other takes them over.
    @Test func storeWideGaugesComeFromOneCoordinator() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        let ports = [Cluster.freePort(), Cluster.freePort()]
        try cluster.startCoordinator(["--metrics-listen", "127.0.0.1:\(ports[0])"])
        try HTTP.poll(ports[0], "/readyz", status: 200)
        let second = try cluster.spawn(["coordinator", "--bind", "tcp://127.0.0.1:\(Cluster.freePort())", "--insecure",
                                        "--metrics-listen", "127.0.0.1:\(ports[1])"] + cluster.db, log: "coordinator2.log")
        defer { cluster.kill9(second) }
        try HTTP.poll(ports[1], "/readyz", status: 200)
        let store = try cluster.openStore()
        defer { store.close() }
        _ = try store.submit(input: "/in.mp4", output: "/out.mp4", spec: JobSpec(), coordinator: "elsewhere")

        func scrape(_ port: Int) throws -> [String: Double] { HTTP.samples(try HTTP.get(port, "/metrics").body) }
        let both = try ports.map(scrape)
        #expect(both.map { $0["tessera_store_gauges"] ?? -1 }.sorted() == [0, 1])
        func jobs(_ samples: [String: Double]) -> Double { samples.filter { $0.key.hasPrefix("tessera_jobs{") }.values.reduce(0, +) }
        #expect(both.map(jobs).reduce(0, +) == 1, "summed over the coordinators, the job counts once: \(both.map(jobs))")
        let serving = both[0]["tessera_store_gauges"] == 1 ? 0 : 1
        if serving == 0 { cluster.kill9(cluster.coordinator) } else { cluster.kill9(second) }
        let other = ports[1 - serving]
        let deadline = Date().addingTimeInterval(10)
        var after = try scrape(other)
        while after["tessera_store_gauges"] != 1, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            after = try scrape(other)
        }
        #expect(after["tessera_store_gauges"] == 1, "the remaining coordinator takes the gauges over")
        #expect(jobs(after) == 1)
    }

    /// A scrape takes under 50 ms with 10,000 segments in the store: the gauges by state come from one
    /// grouped count per table, not from reading segments.
    @Test func scrapeWithTenThousandSegments() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        let store = try cluster.openStore()
        defer { store.close() }
        _ = try store.migrate()
        // Ten jobs of 1,000 pending segments, claimed by a coordinator that is not running (this one leaves them).
        for _ in 0..<10 {
            let id = try store.submit(input: "/in.mp4", output: "/out.mp4", spec: JobSpec(), coordinator: "elsewhere")
            guard let claimed = try store.claimQueuedJob(coordinator: "elsewhere"), claimed.id == id else { throw ToolError("claim failed") }
            let plan = (0..<1000).map { k in
                PlannedSegment(index: k, startPTS: Int64(k * 10), endPTS: Int64(k * 10 + 10), firstPacket: k * 10, lastPacket: k * 10 + 9,
                               frameCount: 10, preRollPackets: 0, entry: .idr)
            }
            try store.addSegments(id, plan)
        }
        let port = Cluster.freePort()
        try cluster.startCoordinator(["--metrics-listen", "127.0.0.1:\(port)"])
        try HTTP.poll(port, "/readyz", status: 200)

        var times: [Double] = []
        var last = HTTP.Response(status: 0, headers: [:], body: "")
        for _ in 0..<20 {
            let started = Stopwatch.now
            last = try HTTP.get(port, "/metrics")
            times.append(Stopwatch.now - started)
        }
        let samples = HTTP.samples(last.body)
        #expect(samples["tessera_segments{state=\"pending\"}"] == 10_000, "every scrape counts the store anew")
        #expect(samples["tessera_jobs{state=\"encoding\"}"] == 10)
        times.sort()
        let median = times[times.count / 2], worst = times.last!
        #expect(median < 0.05, "median scrape \(median) s")
        #expect(worst < 0.25, "worst scrape \(worst) s")
    }
}
