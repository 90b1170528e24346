import Foundation
import PGClient
import Testing
import TesseraStore
import TesseraTestSupport

/// The job commands as users script them, against an embedded PostgreSQL in a private directory.
@Suite(.serialized) struct JobCLITests {
    let binary = Tool.tesseraBinary

    /// TESSERA_DATA_DIR chooses the embedded store for every command; its first use says where it is.
    @Test func tesseraDataDirSeparatesTwoStores() throws {
        let tag = UUID().uuidString.prefix(6)
        let (a, b) = (Fixtures.directory.appendingPathComponent("store-a-\(tag)").path, Fixtures.directory.appendingPathComponent("store-b-\(tag)").path)
        func env(_ dir: String) -> [String: String] { ProcessInfo.processInfo.environment.merging(["TESSERA_DATA_DIR": dir]) { $1 } }
        defer {
            for dir in [a, b] {
                _ = try? Tool.run(binary, ["db", "stop", "--force"], environment: env(dir))
                try? FileManager.default.removeItem(atPath: dir)
            }
        }
        let source = try SourceKind.closedGOPWithBFrames.make()
        let first = try Tool.run(binary, ["submit", source, "-o", Fixtures.output("store-a.mp4")], environment: env(a))
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("tessera: creating the job store in \(a)"))
        let again = try Tool.run(binary, ["submit", source, "-o", Fixtures.output("store-a2.mp4")], environment: env(a))
        #expect(!again.stderr.contains("creating the job store"), "said once")
        let listA = try Tool.run(binary, ["list", "--json"], environment: env(a))
        let listB = try Tool.run(binary, ["list", "--json"], environment: env(b))
        #expect(listA.status == 0 && listB.status == 0, "\(listA.stderr) \(listB.stderr)")
        let jobsA = try #require(try JSONSerialization.jsonObject(with: listA.stdout) as? [Any])
        let jobsB = try #require(try JSONSerialization.jsonObject(with: listB.stdout) as? [Any])
        #expect(jobsA.count == 2 && jobsB.isEmpty, "each store holds its own jobs")
        #expect(FileManager.default.fileExists(atPath: b + "/pgdata/PG_VERSION"))
    }

    /// With a database URL naming the job store, `db stop`/`db start` refuse rather than act on an embedded store
    /// no other command uses, and `db status` reports the URL's store, its password hidden.
    @Test func dbCommandsNeverActOnAnotherStoreThanTheURLs() throws {
        let box = try Sandbox("db-url")
        defer { box.close() }
        var env = ProcessInfo.processInfo.environment
        env["TESSERA_DATA_DIR"] = nil
        env["XDG_STATE_HOME"] = box.path("state")
        env["TESSERA_DATABASE_URL"] = "postgresql://tessera:s3cret@127.0.0.1:9/jobs"
        for command in ["stop", "start"] {
            let refused = try Tool.run(binary, ["db", command], environment: env)
            #expect(refused.status == 1)
            #expect(refused.stderr.hasPrefix("tessera: db \(command) manages the embedded store only"), "\(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1)
        }
        #expect(!FileManager.default.fileExists(atPath: box.path("state/tessera")), "no embedded store was made")
        let status = try Tool.run(binary, ["db", "status"], environment: env)
        #expect(status.status == 3)
        let line = String(decoding: status.stdout, as: UTF8.self)
        #expect(line.hasPrefix("unreachable postgresql://tessera:***@127.0.0.1:9/jobs"), "\(line)")
        #expect(!line.contains("s3cret") && !status.stderr.contains("s3cret"))
        // A data directory named outright is the embedded store the user means.
        #expect(try Tool.run(binary, ["db", "status", "--data-dir", box.dataDir], environment: env).status == 3, "stopped")
    }

    @Test func submitStatusListCancel() throws {
        let dir = Fixtures.directory.appendingPathComponent("db-\(UUID().uuidString.prefix(6))").path
        let db = ["--data-dir", dir]
        defer {
            _ = try? Tool.run(binary, ["db", "stop", "--force"] + db)
            try? FileManager.default.removeItem(atPath: dir)
        }
        let source = try SourceKind.closedGOPWithBFrames.make()
        let submitted = try Tool.run(binary, ["submit", source, "-o", Fixtures.output("queued.mp4"), "--crf", "20"] + db)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let id = submitted.text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(UUID(uuidString: id) != nil, "stdout holds the job id alone: '\(submitted.text)'")

        let status = try Tool.run(binary, ["status", String(id.prefix(8)), "--json"] + db)
        #expect(status.status == 0, "\(status.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any])
        #expect(json["id"] as? String == id)
        #expect(json["state"] as? String == "queued")
        let spec = try #require(json["spec"] as? [String: Any])
        #expect((spec["settings"] as? [String: Any])?["crf"] as? Double == 20)

        let canceled = try Tool.run(binary, ["cancel", id] + db)
        #expect(canceled.status == 0, "\(canceled.stderr)")
        let list = try Tool.run(binary, ["list", "--state", "canceled", "--json"] + db)
        let jobs = try #require(try JSONSerialization.jsonObject(with: list.stdout) as? [[String: Any]])
        #expect(jobs.map { $0["id"] as? String } == [id])
        #expect(jobs.first?["state"] as? String == "canceled")

        let unknown = try Tool.run(binary, ["status", "00000000-0000-0000-0000-000000000000"] + db)
        #expect(unknown.status != 0)
        #expect(unknown.stderr == "tessera: no job 00000000-0000-0000-0000-000000000000\n")

        let running = try Tool.run(binary, ["db", "status"] + db)
        #expect(running.status == 0 && running.text.hasPrefix("running"))
        let migrate = try Tool.run(binary, ["migrate"] + db)
        #expect(migrate.status == 0 && migrate.stderr.contains("up to date"))
    }

    /// Every documented key, always there (null when unset), in job JSON (`status --json`, `list --json`)
    /// and event JSON alike, before and after the job ends.
    @Test func jobAndEventJSONKeysAreStable() throws {
        let box = try Sandbox("stable-keys")
        defer { box.close() }
        let jobKeys: Set = ["id", "state", "input", "output", "spec", "rungs", "settingsHash", "segmentsTotal", "segmentsDone", "framesTotal",
                            "framesDone", "fps", "speed", "etaSeconds", "error", "createdAt", "updatedAt", "finishedAt", "coordinator",
                            "assignedCoordinator", "stalled", "priority", "pass", "audit"]
        let eventKeys: Set = ["id", "job", "at", "kind", "segment", "from", "to", "worker", "detail"]
        let submitted = try box.tessera(["submit", try box.clip(), "-o", box.path("out.mp4"), "--coordinator", "nobody"])
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let id = submitted.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let other = try box.tessera(["submit", box.path("in.mp4"), "-o", box.path("other.mp4")])
        #expect(other.status == 0, "\(other.stderr)")

        let queued = try #require(try JSONSerialization.jsonObject(with: box.tessera(["status", id, "--json"]).stdout) as? [String: Any])
        #expect(Set(queued.keys) == jobKeys)
        #expect(queued["error"] is NSNull && queued["finishedAt"] is NSNull && queued["audit"] is NSNull)
        #expect(queued["assignedCoordinator"] as? String == "nobody" && queued["coordinator"] is NSNull, "submitted for one, held by none")
        let open = try #require(try JSONSerialization.jsonObject(with: box.tessera(["status", "--json"]).stdout) as? [[String: Any]])
        #expect(open.count == 2 && open.allSatisfy { Set($0.keys) == jobKeys })
        #expect(open.contains { $0["assignedCoordinator"] is NSNull }, "a job any coordinator may take")

        #expect(try box.tessera(["cancel", id]).status == 0)
        let listed = try #require(try JSONSerialization.jsonObject(with: box.tessera(["list", "--json"]).stdout) as? [[String: Any]])
        #expect(listed.count == 2 && listed.allSatisfy { Set($0.keys) == jobKeys })
        let canceled = try #require(listed.first { $0["id"] as? String == id })
        #expect(canceled["error"] as? String == "canceled" && canceled["finishedAt"] is String)

        let events = try box.tessera(["events", "--json", "--no-follow"])
        let lines = try events.text.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(lines.count == 3, "two queued, one canceled: \(events.text)")
        #expect(lines.allSatisfy { Set($0.keys) == eventKeys })
        #expect(lines.first?["from"] is NSNull && lines.first?["segment"] is NSNull && lines.first?["worker"] is NSNull)
    }

    /// A ladder job names its rungs: `rungs` in `status --json` (null for one output) and an event beside its creation.
    @Test func aLadderJobNamesItsRungs() throws {
        let box = try Sandbox("ladder-rungs")
        defer { box.close() }
        try FileManager.default.createDirectory(atPath: box.path("out"), withIntermediateDirectories: true)
        let submitted = try box.tessera(["submit", try box.clip(), "-o", box.path("out/master.m3u8"), "--ladder", "720,360",
                                         "--also-dash", "--hls-time", "4", "--coordinator", "nobody"])
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let id = submitted.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let job = try #require(try JSONSerialization.jsonObject(with: box.tessera(["status", id, "--json"]).stdout) as? [String: Any])
        #expect(job["rungs"] as? [String] == ["720p", "360p"])
        let events = try box.tessera(["events", id, "--no-follow"]).text
        #expect(events.contains("job ladder: rungs 720p, 360p; HLS and DASH, 4 s segments"), "\(events)")
        #expect(!FileManager.default.fileExists(atPath: box.path("out/master.m3u8")), "queued only")

        let single = try box.tessera(["submit", box.path("in.mp4"), "-o", box.path("one.mp4"), "--coordinator", "nobody"])
        let plain = single.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let record = try #require(try JSONSerialization.jsonObject(with: box.tessera(["status", plain, "--json"]).stdout) as? [String: Any])
        #expect(record["rungs"] is NSNull)
    }

    /// `list` shows when each job was created and finished; `prune --older-than` removes ended jobs (with
    /// their events) that ended longer ago than that, and never one that has not ended.
    @Test func listShowsTimesAndPruneRemovesEndedJobs() throws {
        let box = try Sandbox("prune")
        defer { box.close() }
        let input = try box.clip()
        let ended = try box.tessera(["submit", input, "-o", box.path("a.mp4")]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        let open = try box.tessera(["submit", input, "-o", box.path("b.mp4")]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try box.tessera(["cancel", ended]).status == 0)

        let list = try box.tessera(["list"])
        #expect(list.status == 0, "\(list.stderr)")
        let rows = list.text.split(separator: "\n").map(String.init)
        #expect(rows.first?.wholeMatch(of: /JOB +STATE +DONE +CREATED \(UTC\) +FINISHED \(UTC\) +INPUT -> OUTPUT/) != nil, "\(list.text)")
        let time = /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/
        let endedRow = try #require(rows.first { $0.hasPrefix(ended) }), openRow = try #require(rows.first { $0.hasPrefix(open) })
        #expect(endedRow.matches(of: time).count == 2, "created and finished: \(endedRow)")
        #expect(openRow.matches(of: time).count == 1 && openRow.contains(" queued "), "\(openRow)")

        let young = try box.tessera(["prune", "--older-than", "7d"])
        #expect(young.status == 0 && young.text.isEmpty)
        #expect(young.stderr == "tessera: removed 0 job(s) that ended more than 7d ago\n")
        Thread.sleep(forTimeInterval: 1.1)
        let pruned = try box.tessera(["prune", "--older-than", "1s"])
        #expect(pruned.status == 0, "\(pruned.stderr)")
        #expect(pruned.text == "\(ended)\n")
        #expect(pruned.stderr == "tessera: removed 1 job(s) that ended more than 1s ago\n")
        let jobs = try #require(try JSONSerialization.jsonObject(with: box.tessera(["list", "--json"]).stdout) as? [[String: Any]])
        #expect(jobs.map { $0["id"] as? String } == [open])
        #expect(try box.tessera(["events", ended, "--no-follow"]).stderr == "tessera: no job \(ended)\n")
        let history = try box.tessera(["events", "--no-follow"]).text
        #expect(!history.contains(ended) && history.contains(open), "the ended job's events went with it")

        let bad = try box.tessera(["prune", "--older-than", "soon"])
        #expect(bad.status == 1)
        #expect(bad.stderr == "tessera: --older-than soon: not an age: give a number and a unit, s, m, h, d or w (7d)\n")
    }

    /// `db stop` says what it did; with a client connected it refuses unless --force.
    @Test func dbStopSaysWhatItDid() throws {
        let box = try Sandbox("db-stop")
        defer { box.close() }
        #expect(try box.tessera(["db", "start"]).status == 0)
        let follower = try Background(box.binary, ["events", "--data-dir", box.dataDir], stdout: box.path("events.out"))
        let server = EmbeddedPostgres(directory: URL(fileURLWithPath: box.dataDir))
        let deadline = Date().addingTimeInterval(20)
        while try server.connectedClients() == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        let refused = try box.tessera(["db", "stop"])
        #expect(refused.status == 1)
        #expect(refused.stderr == "tessera: the job store in \(box.dataDir) has 1 client(s) connected (a coordinator or a job command): give --force to stop it anyway\n")
        #expect(try box.tessera(["db", "status"]).status == 0, "still running")

        let forced = try box.tessera(["db", "stop", "--force"])
        #expect(forced.status == 0)
        #expect(forced.stderr == "tessera: stopped the job store in \(box.dataDir) (1 client(s) disconnected)\n")
        _ = follower.exitStatus(within: 10)
        let again = try box.tessera(["db", "stop"])
        #expect(again.status == 0 && again.stderr == "tessera: the job store in \(box.dataDir) is not running\n")

        #expect(try box.tessera(["db", "start"]).status == 0)
        let quiet = try box.tessera(["db", "stop"])
        #expect(quiet.status == 0 && quiet.stderr == "tessera: stopped the job store in \(box.dataDir)\n")
    }

    /// `submit`, and `watch` of a queued job, warn when no coordinator (or not the one the job names) has
    /// been seen in the store lately; with one running they do not.
    @Test func submitAndWatchWarnWhenNoCoordinatorRuns() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        let source = try SourceKind.closedGOPWithBFrames.make()
        func submit(_ name: String, _ extra: [String] = []) throws -> (id: String, stderr: String) {
            let result = try Tool.run(binary, ["submit", source, "-o", cluster.directory.appendingPathComponent(name).path] + extra + cluster.db)
            #expect(result.status == 0, "\(result.stderr)")
            let id = result.text.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(UUID(uuidString: id) != nil, "stdout holds the job id alone: '\(result.text)'")
            return (id, result.stderr)
        }
        let none = "tessera: warning: no coordinator has been seen in the job store: the job stays queued until one runs (tessera coordinator)\n"
        let alone = try submit("a.mp4")
        #expect(alone.stderr == none)

        // watch warns the same way before following a queued job: its stderr until the job is canceled.
        func watched(_ id: String) throws -> String {
            let watching = Process()
            watching.executableURL = URL(fileURLWithPath: binary)
            watching.arguments = ["watch", id] + cluster.db
            let err = cluster.directory.appendingPathComponent("watch-\(id).err")
            _ = FileManager.default.createFile(atPath: err.path, contents: nil)
            watching.standardError = try FileHandle(forWritingTo: err)
            watching.standardOutput = FileHandle.nullDevice
            try watching.run()
            cluster.waitUntil(timeout: 10) { ((try? String(contentsOf: err, encoding: .utf8)) ?? "").contains("warning") }
            #expect(try Tool.run(binary, ["cancel", id] + cluster.db).status == 0)
            watching.waitUntilExit()
            #expect(watching.terminationStatus == 1)
            return try String(contentsOf: err, encoding: .utf8)
        }
        #expect(try watched(alone.id).hasPrefix(none))

        // A coordinator gone silent an hour ago (killed, its row left behind) counts as not seen.
        let store = try cluster.openStore()
        defer { store.close() }
        try store.coordinatorHeartbeat("gone", host: "elsewhere", endpoint: nil)
        let admin = try PGConnection(conninfo: EmbeddedPostgres(directory: cluster.directory.appendingPathComponent("db")).url, reconnectTimeout: 0)
        defer { admin.close() }
        try admin.query("UPDATE coordinators SET last_seen = now() - interval '1 hour' WHERE id = 'gone'")
        #expect(try submit("b.mp4").stderr
                == "tessera: warning: no coordinator has been seen in the job store for 60 min: the job stays queued until one runs (tessera coordinator)\n")

        try cluster.startCoordinator(["--id", "live"])
        cluster.waitUntil(timeout: 20) { (try? store.coordinators().contains { $0.id == "live" }) ?? false }
        #expect(try submit("c.mp4").stderr.isEmpty)
        let pinned = try submit("d.mp4", ["--coordinator", "gone"])
        let gone = "tessera: warning: coordinator gone has not been seen in the job store for 60 min: the job stays queued until it runs\n"
        #expect(pinned.stderr == gone)
        #expect(try watched(pinned.id).hasPrefix(gone), "watch asks about the coordinator the job names")
        #expect(try submit("e.mp4", ["--coordinator", "live"]).stderr.isEmpty)
    }

    /// Unknown job, malformed URL, unreachable server, PostgreSQL not installed: one line, non-zero exit.
    @Test(arguments: ["unknown-job", "malformed-url", "unreachable", "not-installed", "missing-input"])
    func badInputIsAOneLineError(_ kind: String) throws {
        let args: [String]
        var env: [String: String] = [:]
        let expected: String
        switch kind {
        case "unknown-job":
            // An empty state directory: nothing is started for a malformed id.
            args = ["status", "zzzz-not-a-job", "--database-url", "postgresql://127.0.0.1:1/none"]
            expected = "not a job id"
        case "malformed-url":
            args = ["list", "--database-url", "postgresql://%zz"]
            expected = "malformed database URL"
        case "unreachable":
            args = ["list", "--database-url", "postgresql://127.0.0.1:1/tessera?connect_timeout=2"]
            expected = "cannot connect"
        case "not-installed":
            args = ["list", "--data-dir", Fixtures.directory.appendingPathComponent("never").path]
            env["TESSERA_PG_BINDIR"] = "/nonexistent/bin"
            expected = "not installed"
        default:
            args = ["submit", "/no/such/input.mov", "-o", Fixtures.output("x.mp4"), "--database-url", "postgresql://127.0.0.1:1/none"]
            expected = "no such file"
        }
        let result = try Tool.run(binary, args, environment: env)
        #expect(result.status != 0)
        let lines = result.stderr.split(whereSeparator: \.isNewline)
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains(expected), "\(result.stderr)")
        #expect(result.text.isEmpty)
    }
}
