import Foundation
import PGClient
import Testing
import TesseraCore
@testable import TesseraStore

@Suite struct MigrationTests {
    @Test func migrationsAreIdempotentAndSafeWhenConcurrent() throws {
        let url = try TestDatabase.fresh()
        let results = Locked<[Result<[Int], StoreError>]>([])
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread {
                let result = Result<[Int], StoreError> { () throws(StoreError) in
                    let store = try JobStore(url: url, reconnectTimeout: 5)
                    defer { store.close() }
                    return try store.migrate()
                }
                results.withValue { $0.append(result) }
                group.leave()
            }.start()
        }
        group.wait()
        let applied = try results.current.map { try $0.get() }
        #expect(applied.filter { !$0.isEmpty }.count == 1, "exactly one starter applies the migrations: \(applied)")
        let store = try JobStore(url: url, reconnectTimeout: 5)
        defer { store.close() }
        #expect(try store.migrate().isEmpty)
        let versions = try store.db.query("SELECT count(*) AS n FROM schema_migrations").first?.int("n")
        #expect(versions == applied.first { !$0.isEmpty }?.count)
    }

    @Test func databaseTransitionsAreTheStateMachines() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        let rows = try store.db.query("SELECT kind, from_state, to_state FROM state_transitions").all
        let inDatabase = Set(rows.map { "\($0.string("kind")) \($0.string("from_state")) \($0.string("to_state"))" })
        var inSwift = Set<String>()
        for s in JobState.allCases { for t in s.next { inSwift.insert("job \(s.rawValue) \(t.rawValue)") } }
        for s in SegmentState.allCases { for t in s.next { inSwift.insert("segment \(s.rawValue) \(t.rawValue)") } }
        #expect(inDatabase == inSwift)
    }

    @Test func theDatabaseRefusesAnUnlistedTransition() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        let id = try store.submit(input: "/a.mp4", output: "/b.mp4", spec: JobSpec())
        do {
            try store.db.query("UPDATE jobs SET state = 'done' WHERE id = $1::uuid", [id])
            Issue.record("queued → done was accepted")
        } catch {
            #expect(error.sqlState == "23514")
        }
        #expect(throws: StoreError.self) { try store.setState(id, to: .done) }
        #expect(try store.job(id).state == .queued)
    }
}

@Suite struct LeaseTests {
    /// Many connections leasing at once never get the same segment.
    @Test func concurrentLessorsNeverShareASegment() throws {
        let (setup, url) = try TestDatabase.store()
        let job = try setup.plannedJob(segments: 300)
        setup.close()
        let leases = Locked<[Lease]>([])
        let errors = Locked<[String]>([])
        let group = DispatchGroup()
        for worker in 0..<12 {
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    let store = try JobStore(url: url, reconnectTimeout: 5)
                    defer { store.close() }
                    try store.heartbeat(worker: "w\(worker)", host: "test")
                    while true {
                        let got = try store.lease(worker: "w\(worker)", seconds: 60, limit: 1 + worker % 3)
                        if got.isEmpty { break }
                        leases.withValue { $0.append(contentsOf: got) }
                    }
                } catch {
                    errors.withValue { $0.append("\(error)") }
                }
            }.start()
        }
        group.wait()
        #expect(errors.current.isEmpty, "\(errors.current)")
        let all = leases.current
        #expect(all.count == 300)
        #expect(Set(all.map(\.index)).count == 300)
        #expect(all.allSatisfy { $0.jobID == job })
    }

    /// An expired lease returns the segment and counts an attempt; at the limit the segment and its job
    /// fail, naming the segment and its last error; every transition is in the events.
    @Test func expiredLeasesReturnThenFailAtTheLimit() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        let job = try store.plannedJob(segments: 2)
        try store.heartbeat(worker: "slow", host: "test")
        var first = try store.lease(worker: "slow", seconds: 0.2)
        #expect(first.count == 1)
        #expect(try store.reapExpiredLeases(attemptLimit: 2).returned.isEmpty, "not expired yet")
        Thread.sleep(forTimeInterval: 0.4)
        let reaped = try store.reapExpiredLeases(attemptLimit: 2)
        #expect(reaped.returned.map(\.index) == first.map(\.index))
        #expect(reaped.returned.first?.attempts == 1)
        #expect(reaped.failedJobs.isEmpty)
        let segment = try store.segments(job).first { $0.index == first[0].index }!
        #expect(segment.state == .pending)
        #expect(segment.lastError?.contains("lease expired") == true)

        first = try store.lease(worker: "slow", seconds: 0.2)
        #expect(first.first?.index == segment.index, "the longest, lowest pending segment comes back first")
        Thread.sleep(forTimeInterval: 0.4)
        let second = try store.reapExpiredLeases(attemptLimit: 2)
        #expect(second.failedJobs == [job])
        let failed = try store.job(job)
        #expect(failed.state == .failed)
        #expect(failed.error?.contains("segment \(segment.index) failed after 2 attempts") == true)
        #expect(failed.error?.contains("lease expired") == true)
        let states = try store.segments(job).map(\.state)
        #expect(states.contains(.failed))
        #expect(states.allSatisfy { $0 == .failed || $0 == .canceled })

        let events = try store.events(job)
        let segmentEvents = events.filter { $0.segmentIndex == segment.index }.map { "\($0.from ?? "-")>\($0.to)" }
        #expect(segmentEvents == ["pending>leased", "leased>pending", "pending>leased", "leased>pending", "pending>failed"])
        let jobEvents = events.filter { $0.segmentIndex == nil }.map(\.to)
        #expect(jobEvents == ["queued", "planning", "encoding", "failed"])
    }

    @Test func cancelReachesEveryPendingAndLeasedSegment() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        let job = try store.plannedJob(segments: 5)
        try store.heartbeat(worker: "w", host: "test")
        #expect(try store.lease(worker: "w", seconds: 60, limit: 2).count == 2)
        #expect(try store.cancel(String(job.prefix(8))))
        #expect(try store.job(job).state == .canceled)
        #expect(try store.segments(job).allSatisfy { $0.state == .canceled })
        let canceledEvents = try store.events(job).filter { $0.to == "canceled" }
        #expect(canceledEvents.count == 6, "five segments and the job")
        #expect(try store.cancel(job) == false, "an ended job stays ended")
        #expect(try store.lease(worker: "w", seconds: 60).isEmpty)
    }

    /// A worker id stays with the first CURVE key it joined with.
    @Test func aWorkerIDIsBoundToItsFirstKey() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        #expect(try store.heartbeat(worker: "w", host: "h1", key: "KEY-A"))
        #expect(try store.heartbeat(worker: "w", host: "h2", key: "KEY-B") == false, "another key under the same id")
        #expect(try store.heartbeat(worker: "w", host: "h3", key: "KEY-A"))
        #expect(try store.heartbeat(worker: "plain", host: "h"), "plaintext workers bind nothing")
        #expect(try store.heartbeat(worker: "plain", host: "h", key: "KEY-B"))
    }

    @Test func resultsCountOnlyFromTheLeaseHolder() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        let job = try store.plannedJob(segments: 3)
        try store.heartbeat(worker: "a", host: "test")
        try store.heartbeat(worker: "b", host: "test")
        let lease = try #require(try store.lease(worker: "a", seconds: 60).first)
        let result = SegmentResult(path: "/spool/x", checksum: "abc", sizeBytes: 100, encodeSeconds: 1.5)
        #expect(!lease.token.isEmpty)
        #expect(try store.complete(lease, worker: "b", result: result) == false, "not b's lease")
        #expect(try store.complete(lease, worker: "a", token: "0123456789abcdef", result: result) == false, "not this lease's token")
        #expect(try store.release(job, lease.index, worker: "a", token: "0123456789abcdef", error: "forged") == false,
                "a failure counts only with the lease's token too")
        #expect(try store.complete(lease, worker: "a", result: result))
        #expect(try store.complete(lease, worker: "a", result: result) == false, "a late duplicate changes nothing")
        let record = try store.job(job)
        #expect(record.segmentsDone == 1)
        #expect(record.framesDone == 10)
        #expect(record.framesTotal == 30)
    }

    /// A second pass leases its segments by the seconds their first pass took, longest first: the last lease
    /// is the quickest, and the encoders finish together.
    @Test func aSecondPassLeasesTheSlowestFirstPassFirst() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        let job = try store.plannedJob(segments: 3)
        try store.heartbeat(worker: "a", host: "test")
        for (k, seconds) in [1.0, 3.0, 2.0].enumerated() {
            let lease = try #require(try store.lease(worker: "a", seconds: 60).first)
            #expect(lease.index == k, "equal frames: by index")
            let result = SegmentResult(path: "/spool/\(k)", checksum: "abc", sizeBytes: 100, encodeSeconds: seconds)
            #expect(try store.complete(lease, worker: "a", result: result))
        }
        let passes = Dictionary(uniqueKeysWithValues: (0..<3).map { ($0, [PassInput(pass: 2, bitrate: 400_000, stats: "#options: 2x2")]) })
        #expect(try store.startSecondPass(job, coordinator: "test", passes))
        let order = try (0..<3).map { _ in try #require(try store.lease(worker: "a", seconds: 60).first).index }
        #expect(order == [1, 2, 0])
    }

    /// A whole id is found by the primary key, a prefix by its text; an unknown whole id is no job.
    @Test func aJobIsFoundByItsIdOrAPrefix() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        let job = try store.plannedJob(segments: 1)
        #expect(try store.job(job).id == job)
        #expect(try store.job(job.uppercased()).id == job)
        #expect(try store.job(String(job.prefix(8))).id == job)
        #expect(throws: StoreError.self) { try store.job("00000000-0000-4000-8000-000000000000") }
    }

    /// A segment recorded done moves its frames from in flight to done at once: the job's progress never
    /// counts them twice, and never goes back when the coordinator next records what is in flight.
    @Test func aCompletedSegmentsFramesAreNotCountedTwice() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        let job = try store.plannedJob(segments: 3)
        try store.heartbeat(worker: "a", host: "test")
        let leases = try store.lease(slots: ["a", "a"], seconds: 60)
        try #require(leases.count == 2)
        // 10 frames of the first task encoded, 4 of the second.
        try store.recordProgress(job, framesEncoding: 14, fps: nil, speed: nil)
        #expect(try store.job(job).framesDone == 14)
        let result = SegmentResult(path: "/spool/x", checksum: "abc", sizeBytes: 100, encodeSeconds: 1.5)
        #expect(try store.complete(leases[0].lease, worker: "a", result: result))
        let shown = try store.job(job).framesDone
        #expect(shown == 14, "the finished segment's 10 frames counted once, not 24: \(shown)")
        // What the coordinator records next: the second task's 4 frames.
        try store.recordProgress(job, framesEncoding: 4, fps: nil, speed: nil)
        #expect(try store.job(job).framesDone == 14)
    }

    /// A ladder's progress counts every rung's frames: its done and total frames, and its rate, times its rungs.
    @Test func aLaddersFramesCountInEveryRung() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        let job = try store.plannedJob(segments: 3, outputs: 2)
        try store.heartbeat(worker: "a", host: "test")
        let lease = try #require(try store.lease(worker: "a", seconds: 60).first)
        try store.recordProgress(job, framesEncoding: 4, fps: 12, speed: 0.5)
        var record = try store.job(job)
        #expect(record.framesTotal == 60 && record.framesDone == 8 && record.fps == 24 && record.speed == 0.5)
        let result = SegmentResult(path: "/spool/x", checksum: "abc", sizeBytes: 100, encodeSeconds: 1)
        #expect(try store.complete(lease, worker: "a", result: result))
        try store.recordProgress(job, framesEncoding: 0, fps: 12, speed: 0.5)
        record = try store.job(job)
        #expect(record.framesDone == 20 && record.progress == 1.0 / 3)
        #expect(try store.job(try store.plannedJob(segments: 3)).framesTotal == 30, "one output: its frames once")
    }

    @Test func oneStatementLeasesForEverySlotFairlyAndCompletesABatch() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        let older = try store.plannedJob(segments: 4)
        let newer = try store.plannedJob(segments: 4)
        for w in ["a", "b", "odd\"one,\\"] { try store.heartbeat(worker: w, host: "test") }
        // The older job holds one lease already: the next picks fill both jobs evenly.
        _ = try #require(try store.lease(worker: "a", seconds: 60, jobs: [older]).first)
        let leased = try store.lease(slots: ["a", "b", "odd\"one,\\", "a", "b"], seconds: 60, jobs: [older, newer])
        #expect(leased.count == 5)
        #expect(leased.filter { $0.lease.jobID == older }.count == 2, "2 + 1 held against 3")
        #expect(leased.filter { $0.lease.jobID == newer }.count == 3)
        #expect(Dictionary(grouping: leased, by: \.worker).mapValues(\.count) == ["a": 2, "b": 2, "odd\"one,\\": 1])
        #expect(Set(leased.map { "\($0.lease.jobID)/\($0.lease.index)" }).count == 5, "no segment twice")
        for (worker, lease) in leased {
            #expect(try store.leases(worker: worker).contains(lease))
        }

        let result = SegmentResult(path: "/spool/a \"b\", {c}", offset: 123_456_789_012, checksum: "abc", sizeBytes: 100, encodeSeconds: 1.5)
        let (w0, l0) = leased[0], (w1, l1) = leased[1]
        let batch = [JobStore.Completion(jobID: l0.jobID, index: l0.index, worker: w0, token: l0.token, result: result),
                     JobStore.Completion(jobID: l1.jobID, index: l1.index, worker: w1 == "a" ? "b" : "a", token: l1.token, result: result),
                     JobStore.Completion(jobID: l0.jobID, index: l0.index, worker: w0, token: l0.token, result: result),
                     JobStore.Completion(jobID: l1.jobID, index: l1.index, worker: w1, token: l1.token, result: result)]
        #expect(try store.complete(batch) == [0, 3], "not the other worker's lease; the same result twice counts once")
        #expect(try store.complete(batch).isEmpty, "late duplicates change nothing")
        let done = try store.segments(l0.jobID).first { $0.index == l0.index }
        #expect(done?.state == .done)
        #expect(done?.resultPath == result.path)
        #expect(done?.resultOffset == result.offset, "where the result starts in the job's spool file")
        #expect(try store.job(older).segmentsDone + store.job(newer).segmentsDone == 2)
        #expect(try store.lease(slots: [], seconds: 60).isEmpty)
    }

    @Test func aDeadWorkersLeasesReturnAtOnce() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        let job = try store.plannedJob(segments: 4)
        try store.heartbeat(worker: "dead", host: "test")
        #expect(try store.lease(worker: "dead", seconds: 600, limit: 3).count == 3)
        #expect(try store.releaseAll(worker: "dead", reason: "worker silent for 3 heartbeats") == 3)
        let segments = try store.segments(job)
        #expect(segments.filter { $0.state == .pending }.count == 4)
        #expect(segments.filter { $0.attempts == 1 }.count == 3)
        try store.heartbeat(worker: "w", host: "test")
        let handed = try #require(try store.lease(worker: "w", seconds: 60).first)
        #expect(try store.release(job, handed.index, worker: "w", error: nil), "a clean hand-back")
        #expect(try store.segments(job).first { $0.index == handed.index }?.attempts == handed.attempts, "does not count an attempt")
    }

    @Test func listenersHearAboutNewJobs() throws {
        let (listener, url) = try TestDatabase.store()
        defer { listener.close() }
        try listener.listen()
        let writer = try JobStore(url: url, reconnectTimeout: 5)
        defer { writer.close() }
        let id = try writer.submit(input: "/a.mp4", output: "/b.mp4", spec: JobSpec())
        var heard: [String] = []
        let deadline = Date().addingTimeInterval(5)
        while !heard.contains(id) && Date() < deadline { heard += try listener.waitForChanges(timeout: 1) }
        #expect(heard.contains(id))
    }

    /// A change a query's answer brought in no longer makes the socket readable: the store still knows of
    /// it (the coordinator's loop asks before it waits on the socket).
    @Test func aChangeReadWithAQueryIsStillKnown() throws {
        let (listener, url) = try TestDatabase.store()
        defer { listener.close() }
        try listener.listen()
        #expect(!listener.hasChanges)
        let writer = try JobStore(url: url, reconnectTimeout: 5)
        defer { writer.close() }
        let id = try writer.submit(input: "/a.mp4", output: "/b.mp4", spec: JobSpec())
        let socket = try #require(listener.changesDescriptor)
        func readable(_ milliseconds: Int32) -> Bool {
            var fds = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            return poll(&fds, 1, milliseconds) > 0
        }
        #expect(readable(5000), "the notification arrives on the socket")
        _ = try listener.job(id)
        #expect(!readable(0), "the query's answer took it in")
        #expect(listener.hasChanges)
        #expect(try listener.waitForJobChanges(timeout: 0).map(\.id).contains(id))
        #expect(!listener.hasChanges)
    }
}

/// PostgreSQL stopped and started again in the middle: the store reconnects and no transition is lost.
@Suite(.serialized) struct RestartTests {
    @Test func theStoreCarriesOnAcrossAServerRestart() throws {
        let dir = URL(fileURLWithPath: "/tmp/tessera-restart-\(ProcessInfo.processInfo.processIdentifier)")
        let server = EmbeddedPostgres(directory: dir)
        try server.start()
        defer {
            try? server.stop()
            try? FileManager.default.removeItem(at: dir)
        }
        let store = try JobStore(url: server.url, migrate: true, reconnectTimeout: 30)
        defer { store.close() }
        let job = try store.plannedJob(segments: 4)
        try store.heartbeat(worker: "w", host: "test")
        let before = try #require(try store.lease(worker: "w", seconds: 60).first)

        try server.stop()
        let restarted = Locked<Error?>(nil)
        let group = DispatchGroup()
        group.enter()
        Thread {
            Thread.sleep(forTimeInterval: 1)
            do { try server.start() } catch { restarted.withValue { $0 = error } }
            group.leave()
        }.start()

        // These run while the server is down: the store waits for it and carries on.
        let result = SegmentResult(path: "/spool/0", checksum: "c", sizeBytes: 1, encodeSeconds: 0.1)
        #expect(try store.complete(before, worker: "w", result: result))
        let after = try store.lease(worker: "w", seconds: 60, limit: 3)
        group.wait()
        #expect(restarted.current == nil)
        #expect(after.count == 3)
        let events = try store.events(job).filter { $0.segmentIndex != nil }.map { "\($0.segmentIndex!) \($0.to)" }
        #expect(events.count == 5, "\(events)")
        #expect(events.contains("\(before.index) done"))
    }
}
