import Foundation
import Testing
import TesseraTestSupport

/// `tessera events` as scripts use it: NDJSON history and following, exit statuses, one-line errors.
@Suite(.serialized) struct EventsCommandTests {
    /// A finished job's history: the job's transitions in order, and every segment leased to a worker and done.
    @Test func finishedJobsHistoryAsJSONLines() throws {
        let box = try Sandbox("events-history")
        defer { box.close() }
        let run = try box.tessera(["transcode", try box.clip(), "-o", box.path("out.mp4"), "--preset", "ultrafast",
                                   "--segment-seconds", "1", "--workers", "2", "--json"])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any])
        let job = try #require(summary["job"] as? String)
        let segments = try #require(summary["segments"] as? Int)

        let history = try box.tessera(["events", String(job.prefix(8)), "--json", "--no-follow"])
        #expect(history.status == 0, "stderr: \(history.stderr)")
        let events = try Self.parse(history.text)
        #expect(events.allSatisfy { $0["job"] as? String == job })
        let ids = events.compactMap { $0["id"] as? Int }
        #expect(ids.count == events.count && ids == ids.sorted() && Set(ids).count == ids.count)
        #expect(events.allSatisfy { ($0["at"] as? String)?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/) != nil })

        let jobEvents = events.filter { $0["kind"] as? String == "job" }
        #expect(jobEvents.map { $0["to"] as? String } == ["queued", "planning", "encoding", "stitching", "done"])
        #expect(jobEvents.map { $0["from"] as? String } == [nil, "queued", "planning", "encoding", "stitching"])
        #expect(jobEvents.allSatisfy { $0["segment"] is NSNull && $0.keys.contains("worker") && $0.keys.contains("detail") })
        for index in 0..<segments {
            let mine = events.filter { $0["kind"] as? String == "segment" && $0["segment"] as? Int == index }
            #expect(mine.map { $0["to"] as? String } == ["leased", "done"], "segment \(index): \(mine)")
            #expect((mine.first?["worker"] as? String)?.isEmpty == false, "segment \(index) names its worker")
        }
        #expect(segments >= 2)

        // Following a job that has already ended prints the same history and exits with its result.
        let followed = try box.tessera(["events", job, "--json"])
        #expect(followed.status == 0)
        #expect(try Self.parse(followed.text).count == events.count)
        let text = try box.tessera(["events", job, "--no-follow"])
        #expect(text.text.split(separator: "\n").count == events.count)
        #expect(text.text.split(separator: "\n").last?.hasSuffix("\(job) job stitching -> done") == true, "\(text.text)")
    }

    @Test(arguments: [("00000000", "tessera: no job 00000000\n"), ("not-a-job", "tessera: 'not-a-job' is not a job id\n")])
    func unknownJobIsAOneLineError(_ job: String, _ message: String) throws {
        let box = try Sandbox("events-unknown")
        defer { box.close() }
        let result = try box.tessera(["events", job, "--no-follow"])
        #expect(result.status == 1)
        #expect(result.stderr == message)
        #expect(result.text.isEmpty)
    }

    /// `submit --wait` and `events JOB` follow a queued job (no coordinator runs it) until it is canceled:
    /// both exit 1, the events end with queued -> canceled, and `--on-error` sees state canceled.
    @Test func followingAJobEndsWhenItEnds() throws {
        let box = try Sandbox("events-follow")
        defer { box.close() }
        let hookEnv = box.path("hook.env")
        let submit = try Background(box.binary, ["submit", try box.clip(), "-o", box.path("out.mp4"), "--wait", "--data-dir", box.dataDir,
                                                 "--on-error", "env > '\(hookEnv)'", "--on-complete", "touch '\(box.path("wrong"))'"],
                                    stdout: box.path("submit.out"))
        #expect(submit.waitFor(timeout: 60) { !$0.isEmpty })
        let job = try #require(submit.lines.first)
        let events = try Background(box.binary, ["events", job, "--json", "--data-dir", box.dataDir], stdout: box.path("events.out"))
        #expect(events.waitFor(timeout: 30) { !$0.isEmpty })
        #expect(events.exitStatus(within: 1) == nil, "still following a queued job")

        let cancel = try box.tessera(["cancel", job])
        #expect(cancel.status == 0, "stderr: \(cancel.stderr)")
        #expect(events.exitStatus(within: 20) == 1)
        #expect(submit.exitStatus(within: 20) == 1)
        let lines = try Self.parse(events.lines.joined(separator: "\n"))
        #expect(lines.map { $0["to"] as? String } == ["queued", "canceled"])
        #expect(lines.last?["from"] as? String == "queued")

        let env = try Sandbox.environment(in: hookEnv)
        #expect(env["TESSERA_STATE"] == "canceled")
        #expect(env["TESSERA_JOB_ID"] == job)
        #expect(env["TESSERA_ERROR"] == nil)
        #expect(!FileManager.default.fileExists(atPath: box.path("wrong")))
    }

    /// Without JOB: only events from now on, of every job, until SIGTERM (exit 0).
    @Test func followingEveryJobStopsOnSIGTERM() throws {
        let box = try Sandbox("events-all")
        defer { box.close() }
        let before = try box.tessera(["submit", try box.clip(), "-o", box.path("before.mp4")])
        #expect(before.status == 0, "stderr: \(before.stderr)")
        let events = try Background(box.binary, ["events", "--json", "--data-dir", box.dataDir], stdout: box.path("events.out"))
        // It prints only new events: queue jobs until one shows up, so that it is surely listening.
        var probe = ""
        for attempt in 0..<20 where probe.isEmpty {
            let queued = try box.tessera(["submit", try box.clip("probe\(attempt).mp4"), "-o", box.path("probe\(attempt)-out.mp4")])
            let id = queued.text.trimmingCharacters(in: .whitespacesAndNewlines)
            if events.waitFor(timeout: 2, { $0.contains { $0.contains(id) } }) { probe = id }
        }
        #expect(!probe.isEmpty)

        let run = try box.tessera(["transcode", try box.clip("second.mp4"), "-o", box.path("out.mp4"), "--preset", "ultrafast", "--json"])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let job = try #require((try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any])?["job"] as? String)
        #expect(events.waitFor(timeout: 10) { $0.contains { $0.contains(job) && $0.contains("\"to\":\"done\"") } })
        events.process.terminate()
        #expect(events.exitStatus(within: 10) == 0)

        let lines = try Self.parse(events.lines.joined(separator: "\n"))
        let previous = before.text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!lines.contains { $0["job"] as? String == previous }, "no history of jobs from before it started")
        let transitions = lines.filter { $0["job"] as? String == job && $0["kind"] as? String == "job" }.map { $0["to"] as? String }
        #expect(transitions == ["queued", "planning", "encoding", "stitching", "done"])
    }

    /// One JSON object per non-empty line.
    static func parse(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
    }
}
