import Testing
import TesseraCore
@testable import TesseraCluster

/// The coordinator's failover and fault decisions: its heartbeat in the store, looking for orphaned jobs,
/// workers shared with other coordinators, jobs stalled on a local fault. No socket, store or process.
struct FailoverStateMachineTests {
    typealias Machine = CoordinatorStateMachine
    static let jobA = CoordinatorStateMachineTests.jobA
    static let jobB = CoordinatorStateMachineTests.jobB

    @Test func theHeartbeatInTheStoreIsDueEveryIntervalAndAdoptionLooksBeforeTakeover() {
        var machine = CoordinatorStateMachineTests.machine { $0.heartbeatInterval = 1; $0.takeoverAfter = 15 }
        let start = machine.tick(now: 0).presence, half = machine.tick(now: 0.5).presence
        #expect(start)
        #expect(!half)
        let first = machine.tick(now: 1.0)
        #expect(first.presence)
        #expect(!first.adopt, "no adoption before a look at the others had time")
        var adoptions: [Double] = []
        for step in 1...100 {
            let now = Double(step) * 0.1 + 1
            if machine.tick(now: now).adopt { adoptions.append(now) }
        }
        #expect(adoptions.count >= 4, "looked for orphaned jobs every 2 s at most: \(adoptions)")
        #expect(zip(adoptions, adoptions.dropFirst()).allSatisfy { $1 - $0 <= 2.05 })
    }

    @Test func aShortTakeoverLooksMoreOften() {
        var machine = CoordinatorStateMachineTests.machine { $0.takeoverAfter = 2 }
        var adoptions = 0
        for step in 0...40 where machine.tick(now: Double(step) * 0.1).adopt { adoptions += 1 }
        #expect(adoptions >= 7, "every 0.5 s over 4 s: \(adoptions)")
    }

    @Test func orphansAreAdoptedOnceTheStoresSessionLastedTheTakeover() {
        var machine = CoordinatorStateMachineTests.machine { $0.takeoverAfter = 4 }
        var orphans: [Double] = []
        for step in 0...80 {
            let now = Double(step) * 0.1
            let duties = machine.tick(now: now)
            #expect(!duties.orphans || duties.adopt, "only on an adoption look")
            if duties.orphans { orphans.append(now) }
        }
        #expect(orphans.first.map { $0 >= 4 } == true, "not before the others had 4 s to be heard: \(orphans)")
        #expect(orphans.count >= 3)
        // The store came back at 8: every coordinator's heartbeat in it is stale until they are heard again.
        _ = machine.storeReconnected(now: 8)
        var after: [Double] = []
        for step in 81...140 where machine.tick(now: Double(step) * 0.1).orphans { after.append(Double(step) * 0.1) }
        #expect(after.first.map { $0 >= 12 } == true, "\(after)")
    }

    @Test func aCoordinatorForOneJobAdoptsNoOrphans() {
        var machine = CoordinatorStateMachineTests.machine { $0.takeoverAfter = 1; $0.adoptsOrphans = false }
        var looks = 0
        for step in 0...50 {
            let duties = machine.tick(now: Double(step) * 0.1)
            if duties.adopt { looks += 1 }
            #expect(!duties.orphans)
        }
        #expect(looks > 0, "it still looks for its job held elsewhere")
    }

    @Test func aBusyWorkerGetsNothingUntilTheNextHeartbeatRound() {
        var machine = CoordinatorStateMachineTests.machine(workers: ["w1": 1, "w2": 1], jobs: [Self.jobA: 10])
        var next = 0
        _ = CoordinatorStateMachineTests.dispatchAll(&machine, job: Self.jobA, next: &next)
        let busy = CoordinatorStateMachineTests.lease(CoordinatorStateMachineTests.ref(Self.jobA, 0))
        #expect(machine.answerArrived(busy, from: "w1") == nil)
        machine.busyReply("w1")
        #expect(machine.peers["w1"]?.free == 0, "a busy worker is not sent the lease again at once")
        let paused = machine.dispatch(heldBytes: 0)
        #expect(paused == .none)
        _ = machine.tick(now: 1)
        #expect(machine.peers["w1"]?.free == 1)
        let again = machine.dispatch(heldBytes: 0)
        #expect(again == .lease(slots: ["w1"], jobs: [Self.jobA]))
    }

    @Test func aStalledJobIsNotLeasedUntilItResumes() {
        var machine = CoordinatorStateMachineTests.machine(workers: ["w1": 2], jobs: [Self.jobA: 4, Self.jobB: 4])
        _ = machine.jobStalled(Self.jobA)
        #expect(machine.stalledJobs == [Self.jobA])
        let onlyB = machine.dispatch(heldBytes: 0)
        #expect(onlyB == .lease(slots: ["w1", "w1"], jobs: [Self.jobB]))
        _ = machine.jobStalled(Self.jobB)
        machine.handedBack()
        let none = machine.dispatch(heldBytes: 0)
        #expect(none == .none, "every job stalled: no lease statement")
        let duties = machine.tick(now: 0.5)
        #expect(duties.faults, "stalled jobs' faults are looked at")
        machine.jobResumed(Self.jobA)
        let onlyA = machine.dispatch(heldBytes: 0)
        #expect(onlyA == .lease(slots: ["w1", "w1"], jobs: [Self.jobA]))
    }

    @Test func aFaultStallsALoadedJobOnce() {
        var machine = CoordinatorStateMachineTests.machine(jobs: [Self.jobA: 2])
        #expect(machine.jobStalled(Self.jobB) == .notLoaded)
        #expect(machine.stalledJobs == [], "a job not loaded here is not stalled")
        #expect(machine.jobStalled(Self.jobA) == .stalled)
        #expect(machine.jobStalled(Self.jobA) == .stillStalled, "a second fault is no news")
        machine.jobResumed(Self.jobA)
        #expect(machine.jobStalled(Self.jobA) == .stalled)
    }

    @Test func noFaultChecksWithoutStalledJobs() {
        var machine = CoordinatorStateMachineTests.machine(workers: ["w1": 1], jobs: [Self.jobA: 2])
        let (a, b) = (machine.tick(now: 0).faults, machine.tick(now: 5).faults)
        #expect(!a && !b)
    }

    @Test func aLostJobCancelsItsTasksAndIsForgotten() {
        var machine = CoordinatorStateMachineTests.machine(workers: ["w1": 1, "w2": 1], jobs: [Self.jobA: 4, Self.jobB: 4])
        var next = 0
        _ = CoordinatorStateMachineTests.dispatchAll(&machine, job: Self.jobA, next: &next)
        let cancelled = machine.jobDropped(Self.jobA)
        #expect(cancelled == ["w1", "w2"])
        #expect(machine.jobs[Self.jobA] == nil)
        #expect(machine.peers.values.allSatisfy { $0.inFlight.isEmpty })
        machine.adopted()
        let swept = machine.sweepDue(now: 0.1)
        #expect(swept)
    }
}
