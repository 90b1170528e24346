import Foundation
import Testing
import TesseraCore
import TesseraStore
import TesseraTesting

/// The in-memory store answers the coordinator's calls as PostgreSQL does: one script of them, run on a fresh
/// database and on `InMemoryJobDatabase`, gives the same transcript.
struct InMemoryStoreParityTests {
    @Test func answersAsPostgreSQLDoes() throws {
        let (expected, transcript) = try Self.onBothStores(Self.script)
        #expect(transcript == expected)
        // Not the same mistake twice: a few answers as the store's rules have them.
        #expect(transcript.first == "claim c1: c")
        #expect(transcript.contains("lease c1: w1 c#2 a0, w2 c#1 a0, w1 c#0 a0"))
        #expect(transcript.contains("complete twice: [0]"))
        #expect(transcript.contains("reap: returned a#0 a2, a#1 a2, c#0 a1, c#1 a2; failed a, c"))
        #expect(transcript.contains("threads: c [nil, nil, nil], b [Optional(2)]"), "a plan's threads are kept with its segment")
    }

    /// `script`'s transcript on a fresh PostgreSQL database and on `InMemoryJobDatabase`, whose jobs
    /// `submit(priority, assigned coordinator)` queues.
    static func onBothStores(_ script: (any CoordinatorStore, (Int, String?) throws -> String) throws -> [String]) throws
        -> (postgres: [String], memory: [String]) {
        let (postgres, _) = try TestDatabase.store()
        defer { postgres.close() }
        let expected = try script(postgres) { try postgres.submit(input: "/in.mp4", output: "/out.mp4", spec: JobSpec(), coordinator: $1, priority: $0) }
        let database = InMemoryJobDatabase()
        let memory = database.open()
        defer { memory.close() }
        return (expected, try script(memory) { try database.submit(input: "/in.mp4", output: "/out.mp4", spec: JobSpec(), coordinator: $1, priority: $0) })
    }

    /// Segments of `frames` each, back to back from frame 0, each starting at an IDR.
    static func plan(_ frames: [Int]) -> [PlannedSegment] {
        var first = 0
        return frames.enumerated().map { index, count in
            defer { first += count }
            return PlannedSegment(index: index, startPTS: Int64(first), endPTS: Int64(first + count), firstPacket: first,
                                  lastPacket: first + count - 1, frameCount: count, preRollPackets: 0, entry: .idr)
        }
    }

    /// Runs the coordinator's calls on `store`, whose jobs `submit(priority, assigned coordinator)` queues; returns
    /// what each answered, with job ids named by letter and lease tokens left out.
    static func script(_ store: any CoordinatorStore, submit: (Int, String?) throws -> String) throws -> [String] {
        var out: [String] = []
        var names: [String: String] = [:]
        func name(_ id: String) -> String { names[id] ?? id }
        func job(_ id: String) throws -> String {
            let j = try store.job(id)
            return "\(name(id)) \(j.state.rawValue) \(j.segmentsDone)/\(j.segmentsTotal) frames \(j.framesDone)/\(j.framesTotal) "
                + "by \(j.coordinator ?? "-") stalled \(j.stalled ?? "-") fps \(j.fps.map { String($0) } ?? "-") error \(j.error ?? "-")"
        }
        func segments(_ id: String) throws -> String {
            try store.segments(id).map { "\($0.index):\($0.state.rawValue) a\($0.attempts) \($0.workerID ?? "-") \($0.lastError ?? "-")" }
                .joined(separator: ", ")
        }
        func changes() throws -> String {
            let seen = try store.waitForJobChanges(timeout: 0.5) + store.waitForJobChanges(timeout: 0.1)
            return Set(seen.map { "\(name($0.id)) \($0.state?.rawValue ?? "-")" }).sorted().joined(separator: ", ")
        }
        let plan = Self.plan
        func leased(_ leases: [(worker: String, lease: Lease)]) -> String {
            leases.map { "\($0.worker) \(name($0.lease.jobID))#\($0.lease.index) a\($0.lease.attempts)" }.joined(separator: ", ")
        }

        let a = try submit(50, nil), b = try submit(50, "c2"), c = try submit(80, nil), d = try submit(10, nil)
        names = [a: "a", b: "b", c: "c", d: "d"]
        try store.listen()
        for worker in ["w1", "w2", "w3", "w4"] { try store.heartbeat(worker: worker, host: "h", capabilities: [:], key: nil) }

        // Claims: the highest priority first, never a job assigned to another coordinator.
        for (coordinator, outranking) in [("c1", false), ("c1", false), ("c2", true), ("c2", false), ("c3", false), ("c1", false)] {
            let claimed = try store.claimQueuedJob(coordinator: coordinator, only: nil, outranking: outranking)
            out.append("claim \(coordinator)\(outranking ? " outranking" : ""): \(claimed.map { name($0.id) } ?? "none")")
        }
        out.append("changes: \(try changes())")
        out.append("plan c: \(try store.addSegments(c, plan([10, 20, 30]), framePixels: 100))")
        out.append("plan a: \(try store.addSegments(a, plan([10, 10]), framePixels: 100))")
        // A segment given threads by its plan (a job's tail) keeps them.
        var threaded = plan([5])
        threaded[0].encoderThreads = 2
        out.append("plan b: \(try store.addSegments(b, threaded, framePixels: nil))")
        out.append("plan a again: \(try store.addSegments(a, plan([10]), framePixels: nil))")
        out.append("threads: c \(try store.plannedSegments(c).map(\.encoderThreads)), b \(try store.plannedSegments(b).map(\.encoderThreads))")
        do {
            try store.setState(a, to: .done)
            out.append("encoding to done: moved")
        } catch {
            out.append("encoding to done: refused")
        }
        out.append("changes: \(try changes())")
        out.append("encoding c1: \(try store.jobIDs(in: .encoding, coordinator: "c1").map(name))")

        // Leases: higher priority first, the longest segment first within a job; a job's leases count against it.
        let first = try store.lease(slots: ["w1", "w2", "w1"], seconds: 60, jobs: nil, attemptLimit: 3, coordinator: "c1")
        out.append("lease c1: \(leased(first))")
        let second = try store.lease(slots: ["w2", "w2", "w2"], seconds: 60, jobs: nil, attemptLimit: 3, coordinator: "c1")
        out.append("lease c1 again: \(leased(second))")
        out.append("leases w1: \(try store.leases(worker: "w1", coordinator: "c1").map { "\(name($0.jobID))#\($0.index)" })")
        out.append("holders c1: \(try store.leaseHolders(coordinator: "c1").sorted())")
        out.append("changes: \(try changes())")

        // Results: only under the lease's own token and worker, once.
        let longest = first[0].lease
        let result = SegmentResult(path: "/spool/c", offset: 4, checksum: "ab", sizeBytes: 100, encodeSeconds: 1.5)
        func completion(_ worker: String, _ token: String) -> JobStore.Completion {
            JobStore.Completion(jobID: c, index: longest.index, worker: worker, token: token, result: result)
        }
        out.append("complete forged: \(try store.complete([completion("w1", "forged"), completion("w2", longest.token)]).sorted())")
        out.append("complete: \(try store.complete([completion("w1", "forged"), completion("w1", longest.token)]).sorted())")
        out.append("complete twice: \(try store.complete([completion("w1", longest.token), completion("w1", longest.token)]).sorted())")
        out.append("changes: \(try changes())")
        out.append("release forged: \(try store.release(c, 1, worker: "w2", token: "forged", error: "x"))")
        out.append("release failed: \(try store.release(c, 1, worker: "w2", token: nil, error: "boom"))")
        out.append("release handed back: \(try store.release(c, 0, worker: "w1", error: nil))")
        out.append("release not held: \(try store.release(c, 0, worker: "w1", error: nil))")
        try store.renewAll(worker: "w2", seconds: 120, coordinator: "c1")
        out.append("release all w2: \(try store.releaseAll(worker: "w2", reason: "worker w2 went silent", coordinator: "c1"))")
        out.append("segments c: \(try segments(c))")
        out.append("segments a: \(try segments(a))")

        // Expired leases return with an attempt; a segment at the limit fails its job.
        let expiring = try store.lease(slots: ["w3", "w3", "w3", "w3", "w3"], seconds: -1, jobs: [a, c], attemptLimit: 3, coordinator: "c1")
        out.append("lease expiring: \(leased(expiring.sorted { (name($0.lease.jobID), $0.lease.index) < (name($1.lease.jobID), $1.lease.index) }))")
        let reaped = try store.reapExpiredLeases(attemptLimit: 2)
        out.append("reap: returned \(reaped.returned.map { "\(name($0.jobID))#\($0.index) a\($0.attempts)" }.sorted().joined(separator: ", ")); "
            + "failed \(reaped.failedJobs.map(name).sorted().joined(separator: ", "))")
        out.append("segments c: \(try segments(c))")
        out.append("segments a: \(try segments(a))")
        try store.redo(c, longest.index, reason: "spooled result missing")
        out.append("after redo: \(try job(c)); \(try segments(c))")
        out.append("changes: \(try changes())")

        // Progress, stalls, pins.
        try store.recordProgress(b, framesEncoding: 3, fps: 12.3456, speed: 0.5)
        out.append("progress: \(try job(b))")
        out.append("stalled: \(try store.setStalled(b, reason: "disk full") < 1)")
        out.append("stalled again: \(try store.setStalled(b, reason: "disk full") < 1) \(try job(b))")
        out.append("resumed: \(try store.setStalled(b, reason: nil)) \(try job(b))")
        out.append("pin: \(try store.pinInput(b, identity: #"{"size": 1}"#)) then \(try store.pinInput(b, identity: #"{"size": 2}"#))")
        out.append("headers: \(try store.referenceExtradata(b, proposing: "aa")) then \(try store.referenceExtradata(b, proposing: "bb"))")
        out.append("load c2: \(try store.load(coordinator: "c2", priority: 50).encoders) "
            + "\(try store.load(coordinator: "c2", priority: 50).pendingWork) \(try store.load(coordinator: "c2", priority: 50).queuedJobs)")

        // Two passes: recorded once, by the job's coordinator, while it encodes.
        let passes = [0: [PassInput(pass: 2, bitrate: 1000, stats: "stats", macroblockTree: [1, 2])]]
        out.append("second pass elsewhere: \(try store.startSecondPass(b, coordinator: "c1", passes))")
        out.append("second pass before: \(try store.secondPass(b) == nil)")
        let lease = try store.lease(slots: ["w4"], seconds: 60, jobs: [b], attemptLimit: 3, coordinator: "c2")
        _ = try store.complete(lease.map { JobStore.Completion(jobID: b, index: $0.lease.index, worker: "w4", token: $0.lease.token, result: result) })
        out.append("second pass: \(try store.startSecondPass(b, coordinator: "c2", passes)) \(try segments(b))")
        out.append("second pass after: \(try store.secondPass(b) == passes) \(try store.job(b).pass.map(String.init) ?? "one pass")")
        do {
            _ = try store.startSecondPass(b, coordinator: "c2", passes)
            out.append("second pass again: recorded")
        } catch {
            out.append("second pass again: refused")
        }
        // A result the stitch refused is encoded again as an attempt.
        let again = try store.lease(slots: ["w4"], seconds: 60, jobs: [b], attemptLimit: 3, coordinator: "c2")
        _ = try store.complete(again.map { JobStore.Completion(jobID: b, index: $0.lease.index, worker: "w4", token: $0.lease.token, result: result) })
        let done = try store.segments(b).filter { $0.state == .done }
        for segment in done { try store.redo(b, segment.index, reason: "the stitch refused it", countingAttempt: true) }
        out.append("after counted redo of \(done.count): \(try segments(b))")

        // Workers' keys; coordinators' adoption of a silent one's jobs.
        out.append("keys: \(try store.heartbeat(worker: "w1", host: "h", capabilities: [:], key: "k1")) "
            + "\(try store.heartbeat(worker: "w1", host: "h", capabilities: [:], key: "k2")) "
            + "\(try store.heartbeat(worker: "w1", host: "h", capabilities: [:], key: nil))")
        try store.coordinatorHeartbeat("c3", host: "h", endpoint: nil)
        out.append("adopt while c3 lives: \(try store.adoptOrphanedJobs(coordinator: "c1", silence: 3600).count)")
        try store.coordinatorLeft("c3")
        out.append("adopt: \(try store.adoptOrphanedJobs(coordinator: "c1", silence: 3600).map { "\(name($0.jobID)) from \($0.previous ?? "-") \($0.state.rawValue)" })")
        out.append("after adoption: \(try job(d))")
        out.append("held elsewhere: \(try store.jobsHeldElsewhere([a, b, c, d], coordinator: "c1").map(name).sorted()) "
            + "holds d: \(try store.holds(d, coordinator: "c1"))")
        out.append("changes: \(try changes())")
        return out
    }
}
