import Testing
import TesseraCore
@testable import TesseraCluster

/// The coordinator's decisions, driven by events with no socket, store or process.
struct CoordinatorStateMachineTests {
    typealias Machine = CoordinatorStateMachine
    typealias Ref = ClusterMessage.SegmentRef

    static let jobA = "00000000-0000-0000-0000-00000000000a"
    static let jobB = "00000000-0000-0000-0000-00000000000b"

    static func ref(_ job: String, _ index: Int) -> Ref { Ref(jobID: job, index: index) }
    /// The token the tests' store gives a segment's lease.
    static func token(_ ref: Ref) -> String { "t-\(ref.jobID.suffix(1))-\(ref.index)" }
    static func lease(_ ref: Ref) -> ClusterMessage.LeaseRef { .init(segment: ref, token: token(ref)) }

    /// A machine at time 0 with `workers` (id → slots) joined and `jobs` (id → segment count) loaded.
    static func machine(workers: [String: Int] = [:], jobs: [String: Int] = [:], payloadBytes: Int = 1 << 20,
                        _ edit: (inout Machine.Configuration) -> Void = { _ in }) -> Machine {
        var configuration = Machine.Configuration()
        edit(&configuration)
        var machine = Machine(configuration, now: 0)
        for (id, slots) in workers.sorted(by: { $0.key < $1.key }) {
            _ = machine.workerReady(id, slots: slots, skipsEncode: false, working: [], now: 0)
            machine.leasesKept(id, [:])
        }
        for (id, count) in jobs.sorted(by: { $0.key < $1.key }) {
            machine.jobLoaded(id, segments: Set(0..<count), outstanding: Set(0..<count), payloadBytes: payloadBytes)
        }
        return machine
    }

    /// Leases what the machine asks for, one segment per slot in order, and sends every task.
    static func dispatchAll(_ machine: inout Machine, job: String, next: inout Int, available: Int = .max, held: Int = 0) -> [Machine.LeaseAction] {
        guard case .lease(let slots, _) = machine.dispatch(heldBytes: held) else { return [] }
        var rows: [(worker: String, segment: Ref, attempts: Int, token: String)] = []
        for worker in slots.prefix(available) {
            rows.append((worker, ref(job, next), 0, token(ref(job, next))))
            next += 1
        }
        let actions = machine.leased(rows, asked: slots.count)
        for case .send(let worker, let segment, _, let token) in actions { machine.sent(segment, to: worker, token: token) }
        return actions
    }

    // MARK: Dispatch

    @Test func slotsInterleaveTheWorkers() {
        var machine = Self.machine(workers: ["w1": 2, "w2": 3], jobs: [Self.jobA: 10])
        let r1 = machine.dispatch(heldBytes: 0)
        #expect(r1 == .lease(slots: ["w1", "w2", "w1", "w2", "w2"], jobs: [Self.jobA]))
    }

    @Test func noJobsMeansNoLeaseStatement() {
        var machine = Self.machine(workers: ["w1": 2])
        let r2 = machine.dispatch(heldBytes: 0)
        #expect(r2 == .none)
    }

    @Test func sendWindowLimitsTheSlotsLeased() {
        var machine = Self.machine(workers: ["w1": 4, "w2": 4], jobs: [Self.jobA: 20], payloadBytes: 4 << 20) { $0.sendWindowBytes = 16 << 20 }
        // 6 MB held of 16: room for 2 payloads of 4 MB.
        let r3 = machine.dispatch(heldBytes: 6 << 20)
        #expect(r3 == .lease(slots: ["w1", "w2"], jobs: [Self.jobA]))
        #expect(machine.windowFull)
        #expect(machine.dispatchDue, "a full window looks again soon")
        #expect(machine.receiveTimeout < 0.01)
        // A full window leases nothing, but one payload always goes when it is not full.
        let r4 = machine.dispatch(heldBytes: 16 << 20)
        #expect(r4 == .none)
        let r5 = machine.dispatch(heldBytes: 15 << 20)
        #expect(r5 == .lease(slots: ["w1"], jobs: [Self.jobA]))
    }

    @Test func fullWorkersAreNotAskedFor() {
        var machine = Self.machine(workers: ["w1": 1, "w2": 1], jobs: [Self.jobA: 10])
        var next = 0
        _ = Self.dispatchAll(&machine, job: Self.jobA, next: &next)
        #expect(machine.peers["w1"]?.inFlight.count == 1 && machine.peers["w2"]?.inFlight.count == 1)
        _ = machine.received(.heartbeat, from: "w1", now: 0.1)
        let r6 = machine.dispatch(heldBytes: 0)
        #expect(r6 == .none)
        // A result frees the slot.
        _ = machine.received(.result, from: "w2", now: 0.2)
        #expect(machine.answerArrived(Self.lease(Self.ref(Self.jobA, 1)), from: "w2") == nil)
        let r7 = machine.dispatch(heldBytes: 0)
        #expect(r7 == .lease(slots: ["w2"], jobs: [Self.jobA]))
    }

    @Test func jobsInTheStatementAreEveryLoadedJob() {
        var machine = Self.machine(workers: ["w1": 2], jobs: [Self.jobB: 3, Self.jobA: 3])
        let r8 = machine.dispatch(heldBytes: 0)
        #expect(r8 == .lease(slots: ["w1", "w1"], jobs: [Self.jobA, Self.jobB]))
    }

    // MARK: Nothing pending

    @Test func nothingPendingAsksTheStoreNothingUntilSomethingPutsASegmentBack() {
        var machine = Self.machine(workers: ["w1": 2, "w2": 2], jobs: [Self.jobA: 1])
        var next = 0
        _ = Self.dispatchAll(&machine, job: Self.jobA, next: &next, available: 1)
        #expect(machine.pending == .noneLeft)
        // Heartbeats and results cannot put a segment back.
        _ = machine.received(.heartbeat, from: "w2", now: 0.1)
        let r9 = machine.dispatch(heldBytes: 0)
        #expect(r9 == .none)
        _ = machine.received(.result, from: "w1", now: 0.2)
        #expect(machine.answerArrived(Self.lease(Self.ref(Self.jobA, 0)), from: "w1") == nil)
        let r10 = machine.dispatch(heldBytes: 0)
        #expect(r10 == .none)
    }

    @Test func everyEventThatCanPutASegmentBackRearmsTheLease() {
        let rearmers: [(String, (inout Machine) -> Void)] = [
            ("a failure message", { _ = $0.received(.failure, from: "w1", now: 1) }),
            ("a bye", { _ = $0.received(.bye, from: "w1", now: 1); $0.workerLeft("w1") }),
            ("a ready", { _ = $0.received(.ready, from: "w3", now: 1); _ = $0.workerReady("w3", slots: 1, skipsEncode: false, working: [], now: 1) }),
            ("a refused result", { $0.handedBack() }),
            ("foreign headers", { $0.incompatible("w2") }),
            ("a silent worker", { _ = $0.tick(now: 100) }),
            ("a reap", { $0.reaped() }),
            ("a job loaded", { $0.jobLoaded(Self.jobB, segments: [0], outstanding: [0], payloadBytes: 1) }),
            ("a job's thread reporting", { $0.backgroundEnded(Self.jobA) }),
            ("a job dropped", { _ = $0.jobDropped(Self.jobB) }),
            ("a store reconnect", { _ = $0.storeReconnected(now: 1) }),
            ("a sweep", { _ = $0.sweepDue(now: 10) }),
            ("a task not sent", { $0.notSent() }),
        ]
        for (name, event) in rearmers {
            var machine = Self.machine(workers: ["w1": 2, "w2": 2], jobs: [Self.jobA: 1])
            var next = 0
            _ = Self.dispatchAll(&machine, job: Self.jobA, next: &next, available: 1)
            #expect(machine.pending == .noneLeft, "\(name)")
            event(&machine)
            #expect(machine.pending == .unknown, "\(name) re-arms the lease statement")
        }
    }

    @Test func aHandedBackLeaseKeepsThePendingStateUnknown() {
        var machine = Self.machine(workers: ["w1": 1], jobs: [Self.jobA: 2])
        guard case .lease(let slots, _) = machine.dispatch(heldBytes: 0) else { Issue.record("no lease"); return }
        // A lease for a job not loaded here goes back, and may be leased again.
        let actions = machine.leased([("w1", Self.ref(Self.jobB, 0), 0, "t")], asked: slots.count)
        #expect(actions == [.handBack(worker: "w1", Self.ref(Self.jobB, 0))])
        #expect(machine.pending == .unknown)
    }

    // MARK: Workers

    @Test func aSilentWorkersLeasesReturnAndOthersGetHeartbeats() {
        var machine = Self.machine(workers: ["w1": 1, "w2": 1], jobs: [Self.jobA: 4]) { $0.heartbeatInterval = 1; $0.liveness = 3 }
        var next = 0
        _ = Self.dispatchAll(&machine, job: Self.jobA, next: &next)
        _ = machine.received(.heartbeat, from: "w2", now: 3.5)
        let duties = machine.tick(now: 3.5)
        #expect(duties.silent == ["w1"])
        #expect(duties.heartbeat == ["w2"])
        #expect(!machine.isConnected("w1"))
        let r11 = machine.tick(now: 3.6)
        #expect(r11.heartbeat.isEmpty)
        let r12 = machine.tick(now: 4.5)
        #expect(r12.heartbeat == ["w2"], "one heartbeat per interval")
    }

    @Test func silenceIsJudgedOnlyAfterTheLiveness() {
        var machine = Self.machine(workers: ["w1": 1]) { $0.heartbeatInterval = 1; $0.liveness = 3 }
        let r13 = machine.tick(now: 2.9)
        #expect(r13.silent.isEmpty)
        let r14 = machine.tick(now: 3.95)
        #expect(r14.silent == ["w1"])
    }

    /// A result that crossed its job's cancel is told apart from a result for a lease its worker never held.
    @Test func anAnswerThatCrossedItsJobsEndIsNoRefusal() {
        var machine = Self.machine(workers: ["w1": 1], jobs: [Self.jobA: 2])
        var next = 0
        let sent = Self.dispatchAll(&machine, job: Self.jobA, next: &next)
        #expect(!sent.isEmpty)
        #expect(machine.jobDropped(Self.jobA) == ["w1"])
        #expect(machine.answerArrived(Self.lease(Self.ref(Self.jobA, 0)), from: "w1") == .jobEnded)
        #expect(machine.answerArrived(Self.lease(Self.ref(Self.jobB, 0)), from: "w1") == .noTask)
    }

    @Test func silenceIsJudgedBetweenHeartbeats() {
        var machine = Self.machine(workers: ["w1": 1]) { $0.heartbeatInterval = 1; $0.liveness = 3 }
        for now in [0.0, 1, 2, 3] { #expect(machine.tick(now: now).silent.isEmpty) }
        // Heartbeats are next due at 4; the worker is silent at 3.5 already.
        let between = machine.tick(now: 3.5)
        #expect(between.silent == ["w1"] && between.heartbeat.isEmpty)
    }

    @Test func silenceCountsOnlyUntilTheInboxWasLastRead() {
        var machine = Self.machine(workers: ["w1": 1]) { $0.heartbeatInterval = 1; $0.liveness = 3 }
        // The loop read its inbox at 1, then was held up until 10: the worker's heartbeats may be waiting.
        machine.inboxRead(now: 1)
        #expect(machine.tick(now: 10).silent.isEmpty)
        #expect(machine.isConnected("w1"))
        // Read again at 10 with nothing from it: silent.
        machine.inboxRead(now: 10)
        #expect(machine.tick(now: 11).silent == ["w1"])
    }

    @Test func aReconnectingWorkerTakesOverItsIdentity() {
        var machine = Self.machine(workers: ["w1": 2], jobs: [Self.jobA: 4])
        var next = 0
        _ = Self.dispatchAll(&machine, job: Self.jobA, next: &next)
        #expect(machine.peers["w1"]?.inFlight.count == 2)
        // It comes back with one slot and one of its two tasks: the other's lease goes back.
        let r15 = machine.received(.ready, from: "w1", now: 5)
        #expect(r15, "a ready records the results before it first")
        let working = machine.workerReady("w1", slots: 1, skipsEncode: false, working: [Self.lease(Self.ref(Self.jobA, 1))], now: 5)
        #expect(working == [Self.ref(Self.jobA, 1): Self.token(Self.ref(Self.jobA, 1))])
        machine.leasesKept("w1", working)
        #expect(machine.peers["w1"] == Machine.Peer(slots: 1, inFlight: working, lastHeard: 5))
        let r16 = machine.dispatch(heldBytes: 0)
        #expect(r16 == .none, "its one slot is taken")
    }

    @Test func slotsAreClamped() {
        var machine = Self.machine()
        _ = machine.workerReady("w1", slots: 1000, skipsEncode: false, working: [], now: 0)
        _ = machine.workerReady("w2", slots: 0, skipsEncode: false, working: [], now: 0)
        #expect(machine.peers["w1"]?.slots == 64 && machine.peers["w2"]?.slots == 1)
    }

    @Test func foreignHeadersEndAWorkersWork() {
        var machine = Self.machine(workers: ["w1": 1, "w2": 1], jobs: [Self.jobA: 10])
        var next = 0
        _ = Self.dispatchAll(&machine, job: Self.jobA, next: &next)
        _ = machine.received(.result, from: "w1", now: 1)
        #expect(machine.answerArrived(Self.lease(Self.ref(Self.jobA, 0)), from: "w1") == nil)
        _ = machine.received(.result, from: "w2", now: 1)
        #expect(machine.answerArrived(Self.lease(Self.ref(Self.jobA, 1)), from: "w2") == nil)
        machine.incompatible("w1")
        let r17 = machine.dispatch(heldBytes: 0)
        #expect(r17 == .lease(slots: ["w2"], jobs: [Self.jobA]))
    }

    @Test func benchmarkWorkersGetWorkOnlyFromABenchmarkCoordinator() {
        var plain = Self.machine(jobs: [Self.jobA: 4])
        _ = plain.workerReady("b1", slots: 2, skipsEncode: true, working: [], now: 0)
        let r18 = plain.dispatch(heldBytes: 0)
        #expect(r18 == .none)
        var bench = Self.machine(jobs: [Self.jobA: 4]) { $0.benchmark = true }
        _ = bench.workerReady("b1", slots: 2, skipsEncode: true, working: [], now: 0)
        let r19 = bench.dispatch(heldBytes: 0)
        #expect(r19 == .lease(slots: ["b1", "b1"], jobs: [Self.jobA]))
    }

    @Test func leasesAreRenewedAQuarterLeaseAtATimeWhileHeld() {
        var machine = Self.machine(workers: ["w1": 1], jobs: [Self.jobA: 2]) { $0.leaseSeconds = 40 }
        #expect(!machine.renewalDue("w1", now: 100), "nothing held, nothing to renew")
        var next = 0
        _ = Self.dispatchAll(&machine, job: Self.jobA, next: &next)
        #expect(machine.renewalDue("w1", now: 1))
        machine.leasesRenewed("w1", now: 1)
        #expect(!machine.renewalDue("w1", now: 10.9))
        #expect(machine.renewalDue("w1", now: 11))
    }

    // MARK: Results

    @Test func aLateDuplicateLeavesTheHoldersTaskAlone() {
        var machine = Self.machine(workers: ["w1": 1, "w2": 1], jobs: [Self.jobA: 2])
        var next = 0
        _ = Self.dispatchAll(&machine, job: Self.jobA, next: &next)
        _ = machine.sweepDue(now: 0)
        // w2 sends a result for w1's segment (a late duplicate of an earlier lease): refused, w1's task stays.
        #expect(machine.answerArrived(Self.lease(Self.ref(Self.jobA, 0)), from: "w2") == .noTask)
        #expect(machine.peers["w1"]?.inFlight[Self.ref(Self.jobA, 0)] == Self.token(Self.ref(Self.jobA, 0)))
        #expect(machine.peers["w2"]?.inFlight[Self.ref(Self.jobA, 1)] == Self.token(Self.ref(Self.jobA, 1)))
        // Recording a segment twice counts it once; the job's last segment asks for a sweep.
        machine.recorded(Self.ref(Self.jobA, 0))
        machine.recorded(Self.ref(Self.jobA, 0))
        #expect(machine.jobs[Self.jobA]?.outstanding == [1])
        let r101 = machine.sweepDue(now: 1)

        #expect(!r101, "not yet: the safety-net sweep is 5 s away")
        machine.recorded(Self.ref(Self.jobA, 1))
        let r20 = machine.sweepDue(now: 1.1)
        #expect(r20)
    }

    @Test func resultsOfAJobNotLoadedAreIgnored() {
        var machine = Self.machine(jobs: [Self.jobA: 2])
        machine.recorded(Self.ref(Self.jobB, 0))
        #expect(machine.jobs[Self.jobB] == nil)
        #expect(machine.jobs[Self.jobA]?.outstanding == [0, 1])
    }

    @Test func aResultCountsOnlyForItsWorkersTaskUnderItsToken() {
        var machine = Self.machine(workers: ["w1": 1, "w2": 1], jobs: [Self.jobA: 4])
        var next = 0
        _ = Self.dispatchAll(&machine, job: Self.jobA, next: &next)
        let first = Self.ref(Self.jobA, 0)
        #expect(machine.answerArrived(.init(segment: first, token: "forged"), from: "w1") == .wrongToken)
        #expect(machine.answerArrived(Self.lease(first), from: "w2") == .noTask, "another worker's segment")
        #expect(machine.answerArrived(Self.lease(first), from: "stranger") == .unknownWorker)
        #expect(machine.peers["w1"]?.inFlight[first] == Self.token(first), "refusals leave the task in flight")
        #expect(machine.answerArrived(Self.lease(first), from: "w1") == nil)
        #expect(machine.peers["w1"]?.inFlight.isEmpty == true, "its slot is free")
        for _ in 0..<20 { #expect(machine.answerArrived(Self.lease(first), from: "w1") == .noTask, "a duplicate") }
    }

    @Test func aWorkerWhoseKeyIsRevokedIsForgottenAndItsLeasesGoBack() {
        var machine = Self.machine(jobs: [Self.jobA: 4])
        _ = machine.workerReady("kept", slots: 1, skipsEncode: false, key: "K1", working: [], now: 0)
        _ = machine.workerReady("revoked", slots: 1, skipsEncode: false, key: "K2", working: [], now: 0)
        _ = machine.workerReady("plain", slots: 1, skipsEncode: false, working: [], now: 0)
        var next = 0
        _ = Self.dispatchAll(&machine, job: Self.jobA, next: &next, available: 3)
        _ = machine.leased([], asked: 1)
        #expect(machine.pending == .noneLeft)
        #expect(machine.keysChanged(allowed: ["K1", "K2"]).isEmpty)
        #expect(machine.keysChanged(allowed: ["K1"]) == ["revoked"])
        #expect(!machine.isConnected("revoked") && machine.isConnected("kept") && machine.isConnected("plain"))
        #expect(machine.pending == .unknown, "its leases go back: the store has pending segments again")
        let again = machine.dispatch(heldBytes: 0)
        #expect(again == .none, "the others' slots are full; the revoked worker gets nothing")
        #expect(machine.answerArrived(Self.lease(Self.ref(Self.jobA, 1)), from: "revoked") == .unknownWorker)
    }

    // MARK: Jobs

    @Test func droppingAJobCancelsItsTasksAndFreesTheirSlots() {
        var machine = Self.machine(workers: ["w1": 2, "w2": 1], jobs: [Self.jobA: 2, Self.jobB: 2])
        machine.sent(Self.ref(Self.jobA, 0), to: "w1", token: "a0")
        machine.sent(Self.ref(Self.jobB, 0), to: "w1", token: "b0")
        machine.sent(Self.ref(Self.jobA, 1), to: "w2", token: "a1")
        let r21 = machine.jobDropped(Self.jobA)
        #expect(r21 == ["w1", "w2"])
        #expect(machine.peers["w1"]?.inFlight == [Self.ref(Self.jobB, 0): "b0"])
        #expect(machine.peers["w2"]?.inFlight.isEmpty == true)
        #expect(machine.jobs[Self.jobA] == nil)
        let r22 = machine.dispatch(heldBytes: 0)
        #expect(r22 == .lease(slots: ["w1", "w2"], jobs: [Self.jobB]))
    }

    @Test func aLeaseOfADroppedJobGoesBack() {
        var machine = Self.machine(workers: ["w1": 1], jobs: [Self.jobA: 2])
        guard case .lease = machine.dispatch(heldBytes: 0) else { Issue.record("no lease"); return }
        _ = machine.jobDropped(Self.jobA)
        let r23 = machine.leased([("w1", Self.ref(Self.jobA, 0), 0, "t")], asked: 1)
        #expect(r23 == [.handBack(worker: "w1", Self.ref(Self.jobA, 0))])
    }

    @Test func aJobBeingPreparedIsNotLoadedTwiceNorStitched() {
        var machine = Self.machine()
        #expect(machine.needsLoading(Self.jobA))
        machine.backgroundStarted(Self.jobA)
        #expect(!machine.needsLoading(Self.jobA))
        machine.backgroundEnded(Self.jobA)
        machine.jobLoaded(Self.jobA, segments: [0], outstanding: [0], payloadBytes: 10)
        #expect(!machine.needsLoading(Self.jobA) && machine.mayStitch(Self.jobA))
        machine.backgroundStarted(Self.jobA)
        #expect(!machine.mayStitch(Self.jobA), "stitching already")
    }

    @Test func notificationsOfOurEncodingJobsNeedNoSweep() {
        var machine = Self.machine(jobs: [Self.jobA: 2])
        _ = machine.sweepDue(now: 0)
        machine.notified(Self.jobA, state: .encoding)
        let r102 = machine.sweepDue(now: 1)

        #expect(!r102)
        machine.notified(Self.jobB, state: .queued)
        let r24 = machine.sweepDue(now: 1.01)
        #expect(r24)
        // At most every 50 ms when asked.
        machine.notified(Self.jobA, state: .canceled)
        let r103 = machine.sweepDue(now: 1.03)

        #expect(!r103)
        let r25 = machine.sweepDue(now: 1.07)
        #expect(r25)
        let r104 = machine.sweepDue(now: 2)

        #expect(!r104, "the safety net waits 5 s")
        let r26 = machine.sweepDue(now: 6.07)
        #expect(r26)
    }

    @Test func anIdleCoordinatorSweepsAtOnceWhenAJobIsQueued() {
        var machine = Self.machine(jobs: [:])
        _ = machine.sweepDue(now: 0)
        machine.notified(Self.jobA, state: .queued)
        let idle = machine.sweepDue(now: 0.001)
        #expect(idle, "nothing to do: no reason to wait")
        // Once it has a job, notifications wait out the 50 ms again.
        machine.planningStarted(Self.jobA)
        machine.notified(Self.jobB, state: .queued)
        let busy = machine.sweepDue(now: 0.002)
        #expect(!busy)
        let later = machine.sweepDue(now: 0.06)
        #expect(later)
    }

    @Test func theStoreSpeakingHasItsNotificationsReadOnTheSameTurn() {
        var machine = Self.machine(jobs: [:])
        #expect(machine.tick(now: 0).notifications, "read on the first turn")
        #expect(!machine.tick(now: 0.003).notifications, "then every 10 ms")
        // Its socket became readable: a job was submitted, and waiting out the 10 ms delays its claim.
        machine.storeSpoke(now: 0.004)
        #expect(machine.tick(now: 0.004).notifications)
        #expect(!machine.tick(now: 0.005).notifications, "and the cadence resumes")
        #expect(machine.tick(now: 0.015).notifications)
    }

    @Test func queuedJobsArePlannedAsTheirWorkIsAboutToBeLeased() {
        // Two slots, a job of 3 segments: 3 not leased, nothing more is planned.
        var machine = Self.machine(workers: ["w1": 1, "w2": 1], jobs: [Self.jobA: 3])
        #expect(!machine.wantsJobs)
        var next = 0
        _ = Self.dispatchAll(&machine, job: Self.jobA, next: &next)
        // One left to lease, two slots: plan the next job, and only one at a time.
        #expect(machine.wantsJobs)
        machine.planningStarted(Self.jobB)
        #expect(!machine.wantsJobs, "a job being planned counts as a segment coming")
        machine.backgroundEnded(Self.jobB)
        machine.jobLoaded(Self.jobB, segments: [0, 1], outstanding: [0, 1], payloadBytes: 10)
        #expect(!machine.wantsJobs)
        // A stalled job's segments cannot be leased: they do not count.
        _ = machine.jobStalled(Self.jobB)
        #expect(machine.wantsJobs)
    }

    @Test func aQueueLeftWaitingIsSweptWhenPlannedWorkRunsShort() {
        var machine = Self.machine(workers: ["w1": 1, "w2": 1], jobs: [Self.jobA: 3])
        _ = machine.sweepDue(now: 0)
        machine.claimed(leftWaiting: true)
        let full = machine.sweepDue(now: 1)
        #expect(!full, "3 segments wait for 2 slots")
        var next = 0
        _ = Self.dispatchAll(&machine, job: Self.jobA, next: &next)
        let short = machine.sweepDue(now: 1.01)
        #expect(short)
        machine.claimed(leftWaiting: false)
        let none = machine.sweepDue(now: 1.1)
        #expect(!none, "nothing was left queued")
        // With no worker at all, one job is still planned.
        var empty = Self.machine()
        #expect(empty.wantsJobs)
        empty.planningStarted(Self.jobA)
        #expect(!empty.wantsJobs)
    }

    @Test func aJobsLastSegmentIsSweptAtOnce() {
        var machine = Self.machine(jobs: [Self.jobA: 2])
        _ = machine.sweepDue(now: 1)
        machine.recorded(Self.ref(Self.jobA, 0))
        let one = machine.sweepDue(now: 1.01)
        #expect(!one, "a segment that is not the last needs no sweep")
        machine.recorded(Self.ref(Self.jobA, 1))
        let last = machine.sweepDue(now: 1.02)
        #expect(last, "the last one does, within the 50 ms between asked sweeps")
    }

    @Test func aStoreReconnectReconcilesEveryWorkerAndSweeps() {
        var machine = Self.machine(workers: ["w1": 2, "w2": 1], jobs: [Self.jobA: 5])
        var next = 0
        _ = Self.dispatchAll(&machine, job: Self.jobA, next: &next)
        _ = machine.sweepDue(now: 0)
        let working = machine.storeReconnected(now: 0)
        let tasks = [0, 1, 2].map { Self.ref(Self.jobA, $0) }
        #expect(working == ["w1": [tasks[0]: Self.token(tasks[0]), tasks[2]: Self.token(tasks[2])], "w2": [tasks[1]: Self.token(tasks[1])]])
        #expect(machine.pending == .unknown)
        let r27 = machine.sweepDue(now: 0.06)
        #expect(r27, "what was notified meanwhile is lost")
    }

    @Test func reapsComeEveryFewSecondsAndAbsentHoldersAfterAGracePeriod() {
        var machine = Self.machine { $0.heartbeatInterval = 1; $0.liveness = 3; $0.leaseSeconds = 600 }
        let first = machine.tick(now: 0)
        #expect(first.reap && !first.absentHolders, "workers have not had time to come back")
        #expect(!machine.tick(now: 1).reap)
        let r28 = machine.tick(now: 5)
        #expect(r28.reap)
        let later = machine.tick(now: 39)
        #expect(later.reap && later.absentHolders)
    }
}
