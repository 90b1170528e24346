import Testing
@testable import TesseraCluster
import TesseraStore

/// The order jobs get free encoders in: priorities, the bound on a job's wait, then the least work left.
struct LeaseOrderTests {
    typealias Standing = LeaseOrder.Standing

    /// The order of `jobs` (id, priority, submitted, remaining) at `now`.
    static func rank(_ jobs: [(String, Int, Double, Double)], maxWait: Double = 60, now: Double) -> [String] {
        LeaseOrder(maxWait: maxWait).ranked(Dictionary(uniqueKeysWithValues: jobs.map {
            ($0.0, Standing(priority: $0.1, submitted: $0.2, remaining: $0.3))
        }), now: now)
    }

    @Test func theJobWithTheLeastWorkLeftComesFirstWithinAPriority() {
        let jobs = [("big", 50, 0.0, 900.0), ("small", 50, 5, 100), ("middle", 50, 2, 400)]
        #expect(Self.rank(jobs, maxWait: 600, now: 10) == ["small", "middle", "big"])
    }

    @Test func prioritiesComeBeforeWorkLeftAndBeforeWaiting() {
        // The low one has waited past the bound and is smallest: the urgent one still goes first.
        let jobs = [("low", 10, 0.0, 1.0), ("urgent", 90, 500, 1000), ("normal", 50, 400, 10)]
        #expect(Self.rank(jobs, now: 510) == ["urgent", "normal", "low"])
    }

    @Test func aJobWaitingPastTheBoundIsServedFirstOldestFirst() {
        let jobs = [("large", 50, 0.0, 1000.0), ("larger", 50, 10, 2000), ("small", 50, 50, 1)]
        #expect(Self.rank(jobs, now: 59) == ["small", "large", "larger"])
        #expect(Self.rank(jobs, now: 70) == ["large", "larger", "small"])
    }

    @Test func tiesGoToTheFirstSubmittedThenTheID() {
        let jobs = [("b", 50, 1.0, 5.0), ("a", 50, 1, 5), ("c", 50, 0, 5)]
        #expect(Self.rank(jobs, now: 2) == ["c", "a", "b"])
        #expect(Self.rank(jobs, now: 200) == ["c", "a", "b"])
    }

    // MARK: Claims

    @Test func queuedJobsAreClaimedSmallestFirstWithinAPriority() {
        let queued = [QueuedJob(id: "big", priority: 50, waited: 9, work: 900), QueuedJob(id: "unknown", priority: 50, waited: 10, work: nil),
                      QueuedJob(id: "small", priority: 50, waited: 1, work: 100), QueuedJob(id: "urgent", priority: 90, waited: 0, work: 5000)]
        // Priority first; a job of unknown size after those known, until it waited past the bound.
        #expect(LeaseOrder(maxWait: 600).claims(queued) == ["urgent", "small", "big", "unknown"])
        #expect(LeaseOrder(maxWait: 10).claims(queued) == ["urgent", "unknown", "small", "big"])
        #expect(LeaseOrder(maxWait: 5).claims(queued) == ["urgent", "unknown", "big", "small"], "the longest waiting first")
    }

    @Test func claimsAndLeasesFollowOneRule() {
        // The same standings, queued or loaded, come in the same order.
        let jobs = [("a", 50, -30.0, 300.0), ("b", 50, -2, 100), ("c", 70, -1, 900), ("d", 50, -80, 1000)]
        let queued = jobs.map { QueuedJob(id: $0.0, priority: $0.1, waited: -$0.2, work: $0.3) }
        #expect(LeaseOrder(maxWait: 60).claims(queued) == Self.rank(jobs, maxWait: 60, now: 0))
        #expect(LeaseOrder(maxWait: 60).claims(queued) == ["c", "d", "b", "a"])
    }

    // MARK: The machine

    @Test func theMachineLeasesInTheOrderOfWorkLeft() {
        var machine = CoordinatorStateMachine(.init(), now: 0)
        _ = machine.workerReady("w1", slots: 2, skipsEncode: false, working: [], now: 0)
        machine.jobLoaded("a", segments: [0, 1], outstanding: [0, 1], payloadBytes: 1,
                          standing: .init(priority: 50, submitted: 0, work: [0: 100, 1: 100]))
        machine.jobLoaded("b", segments: [0, 1], outstanding: [0, 1], payloadBytes: 1,
                          standing: .init(priority: 50, submitted: 1, work: [0: 10, 1: 10]))
        #expect(machine.dispatch(heldBytes: 0) == .lease(slots: ["w1", "w1"], jobs: ["b", "a"]))
        // a's segments recorded done: none of it left, so it ranks first; then a new job c (5), then b (20).
        machine.recorded(.init(jobID: "a", index: 0))
        machine.recorded(.init(jobID: "a", index: 1))
        machine.jobLoaded("c", segments: [0], outstanding: [0], payloadBytes: 1, standing: .init(priority: 50, submitted: 2, work: [0: 5]))
        #expect(machine.dispatch(heldBytes: 0) == .lease(slots: ["w1", "w1"], jobs: ["a", "c", "b"]))
    }

    @Test func aFirstPassCountsItsSecondPass() {
        var first = CoordinatorStateMachine.Job(segments: [0], outstanding: [0], payloadBytes: 1, pass: .first)
        first.standing.work = [0: 10]
        var second = first
        second.pass = .second
        #expect(first.remaining == 20)
        #expect(second.remaining == 10)
    }

    @Test func theMachineAgesJobsByItsClock() {
        var machine = CoordinatorStateMachine(.init(maxWait: 30), now: 0)
        _ = machine.workerReady("w1", slots: 1, skipsEncode: false, working: [], now: 0)
        machine.jobLoaded("large", segments: [0], outstanding: [0], payloadBytes: 1,
                          standing: .init(priority: 50, submitted: -20, work: [0: 1000]))
        machine.jobLoaded("small", segments: [0], outstanding: [0], payloadBytes: 1, standing: .init(priority: 50, submitted: 0, work: [0: 1]))
        #expect(machine.leaseOrder == ["small", "large"])
        _ = machine.received(.heartbeat, from: "w1", now: 10)
        _ = machine.tick(now: 10)
        #expect(machine.leaseOrder == ["large", "small"])
    }

    // MARK: A stream of small jobs

    @Test func aLargeJobBehindAStreamOfSmallOnesFinishesWithinItsBound() throws {
        let maxWait = 60.0
        let run = StreamSimulation(maxWait: maxWait).run(until: 2000)
        let large = try #require(run.finished[StreamSimulation.large])
        // Waiting at most the bound, then every encoder on it: its work over the encoders, after the segments
        // in flight when it became due (one small segment each).
        let bound = maxWait + StreamSimulation.largeWork / Double(StreamSimulation.encoders) + StreamSimulation.smallSegment
        #expect(large <= bound, "the large job finished at \(large) s, past its bound of \(bound) s")
        // The small jobs go on finishing soon after their submission, apart from those the large one held up.
        #expect(run.finished.count > 400)
    }

    @Test func withoutTheBoundTheStreamStarvesTheLargeJob() {
        let run = StreamSimulation(maxWait: .infinity).run(until: 2000)
        #expect(run.finished[StreamSimulation.large] == nil)
    }

    @Test func aStreamOfHigherPriorityStillComesFirst() {
        // The large job has waited past its bound, but the stream outranks it: it waits for the stream.
        let run = StreamSimulation(maxWait: 60, streamPriority: 60).run(until: 2000)
        #expect(run.finished[StreamSimulation.large] == nil)
    }

    @Test func aLargeJobQueuedBehindAStreamOfSmallOnesIsClaimedWithinItsBound() throws {
        // Jobs wait in the queue and are claimed as the machine wants work, in `LeaseOrder.claims`' order.
        let maxWait = 60.0
        let run = StreamSimulation(maxWait: maxWait, queued: true, streamInterval: 1).run(until: 2000)
        let large = try #require(run.finished[StreamSimulation.large])
        // The bound, after the small segments already planned when it became due (fewer than the slots) and
        // those in flight.
        let bound = maxWait + StreamSimulation.largeWork / Double(StreamSimulation.encoders) + 2 * StreamSimulation.smallSegment
        #expect(large <= bound, "the large job finished at \(large) s, past its bound of \(bound) s")
        #expect(run.finished.count > 400)
        // Before the bound, the small jobs are claimed first: the large one is not planned in its first minute.
        #expect(try #require(run.claimed[StreamSimulation.large]) >= maxWait)
    }

    @Test func queuedWithoutTheBoundTheStreamStarvesTheLargeJob() {
        #expect(StreamSimulation(maxWait: .infinity, queued: true, streamInterval: 1).run(until: 2000).claimed[StreamSimulation.large] == nil)
    }

    @Test func aQueuedStreamOfHigherPriorityStillComesFirst() {
        let run = StreamSimulation(maxWait: 60, streamPriority: 60, queued: true, streamInterval: 1).run(until: 2000)
        #expect(run.claimed[StreamSimulation.large] == nil)
        // And a large job of the higher priority is claimed before the stream's small ones, at once.
        let urgent = StreamSimulation(maxWait: 60, largePriority: 60, queued: true, streamInterval: 1).run(until: 200)
        #expect(urgent.claimed[StreamSimulation.large] == 0)
    }
}

/// Two one-slot workers; at time 0 a large job (20 segments of 10 s), then a small job (2 segments of 2 s) every
/// 2 s, which alone keeps both encoders busy. Drives the state machine second by second and leases as the store
/// does: the machine's jobs in its order, longest segment first within a job. With `queued`, jobs wait in a queue
/// and are claimed (planned at once) while the machine wants jobs, first in `LeaseOrder.claims`' order.
struct StreamSimulation {
    static let encoders = 2
    static let large = "large"
    static let largeWork = 200.0
    static let smallSegment = 2.0

    var maxWait: Double
    var streamPriority = 50
    var largePriority = 50
    var queued = false
    /// Seconds between the small jobs: 1 submits twice what the encoders do, so the queue always holds some.
    var streamInterval = 2

    struct Run {
        var finished: [String: Double] = [:]
        /// When each job was claimed from the queue (loaded, without `queued`).
        var claimed: [String: Double] = [:]
    }

    func run(until end: Int) -> Run {
        typealias Ref = CoordinatorStateMachine.SegmentRef
        var machine = CoordinatorStateMachine(.init(maxWait: maxWait), now: 0)
        let workers = (1...Self.encoders).map { "w\($0)" }
        for worker in workers { _ = machine.workerReady(worker, slots: 1, skipsEncode: false, working: [], now: 0) }
        var pending: [String: [Int: Double]] = [:]
        var running: [String: (ref: Ref, token: String, ends: Double)] = [:]
        var result = Run()
        var queue: [String: (segments: Int, seconds: Double, priority: Int, submitted: Double)] = [:]
        func load(_ id: String, segments: Int, seconds: Double, priority: Int, submitted: Double, at now: Double) {
            let work = Dictionary(uniqueKeysWithValues: (0..<segments).map { ($0, seconds) })
            pending[id] = work
            result.claimed[id] = now
            machine.jobLoaded(id, segments: Set(work.keys), outstanding: Set(work.keys), payloadBytes: 1,
                              standing: .init(priority: priority, submitted: submitted, work: work))
        }
        func submit(_ id: String, segments: Int, seconds: Double, priority: Int, at now: Double) {
            if queued {
                queue[id] = (segments, seconds, priority, now)
                return
            }
            load(id, segments: segments, seconds: seconds, priority: priority, submitted: now, at: now)
        }
        submit(Self.large, segments: 20, seconds: 10, priority: largePriority, at: 0)
        for second in 0...end {
            let now = Double(second)
            if second % streamInterval == 0 { submit("small-\(second)", segments: 2, seconds: Self.smallSegment, priority: streamPriority, at: now) }
            // The coordinator's sweep: claims while the machine wants jobs, in the lease order.
            let order = LeaseOrder(maxWait: maxWait)
            while machine.wantsJobs, let next = order.claims(queue.map {
                QueuedJob(id: $0.key, priority: $0.value.priority, waited: now - $0.value.submitted, work: Double($0.value.segments) * $0.value.seconds)
            }).first, let job = queue.removeValue(forKey: next) {
                load(next, segments: job.segments, seconds: job.seconds, priority: job.priority, submitted: job.submitted, at: now)
            }
            for worker in workers {
                if let task = running[worker], task.ends <= now {
                    running[worker] = nil
                    #expect(machine.answerArrived(.init(segment: task.ref, token: task.token), from: worker) == nil)
                    machine.recorded(task.ref)
                    if machine.jobs[task.ref.jobID]?.outstanding.isEmpty == true {
                        result.finished[task.ref.jobID] = now
                        _ = machine.jobDropped(task.ref.jobID)
                    }
                }
                _ = machine.received(.heartbeat, from: worker, now: now)
            }
            _ = machine.tick(now: now)
            guard case .lease(let slots, let jobs) = machine.dispatch(heldBytes: 0) else { continue }
            var rows: [(worker: String, segment: Ref, attempts: Int, token: String)] = []
            var free = slots[...]
            for job in jobs {
                for (index, _) in (pending[job] ?? [:]).sorted(by: { ($0.value, -$0.key) > ($1.value, -$1.key) }) {
                    guard let worker = free.popFirst() else { break }
                    pending[job]?[index] = nil
                    rows.append((worker, Ref(jobID: job, index: index), 0, "\(job)-\(index)"))
                }
            }
            for case .send(let worker, let ref, _, let token) in machine.leased(rows, asked: slots.count) {
                machine.sent(ref, to: worker, token: token)
                running[worker] = (ref, token, now + (machine.jobs[ref.jobID]?.standing.work[ref.index] ?? 0))
            }
        }
        return result
    }
}
