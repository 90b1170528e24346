import Testing
import TesseraCore
@testable import TesseraCluster

/// What a sweep does with each loaded job: stitch it, start its second pass, forget it, or let it go. No
/// socket, store or process.
struct SweepStateMachineTests {
    typealias Machine = CoordinatorStateMachine
    static let jobA = CoordinatorStateMachineTests.jobA

    static func stored(_ state: JobState = .encoding, done: Int, of total: Int, heldHere: Bool = true) -> Machine.StoredJob {
        .init(heldHere: heldHere, state: state, segmentsDone: done, segmentsTotal: total)
    }

    @Test func aJobIsStitchedOnceEverySegmentIsDone() {
        let machine = CoordinatorStateMachineTests.machine(jobs: [Self.jobA: 3])
        #expect(machine.sweepAction(Self.jobA, Self.stored(done: 2, of: 3)) == nil)
        #expect(machine.sweepAction(Self.jobA, Self.stored(done: 3, of: 3)) == .stitch)
        #expect(machine.sweepAction(Self.jobA, Self.stored(done: 0, of: 0)) == nil, "no segments recorded yet")
        #expect(machine.sweepAction(Self.jobA, Self.stored(.stitching, done: 3, of: 3)) == nil, "stitching already")
        #expect(machine.sweepAction(CoordinatorStateMachineTests.jobB, Self.stored(done: 3, of: 3)) == nil, "not loaded here")
    }

    @Test func aJobIsNotStitchedWhileItsThreadWorksOrAFaultStopsIt() {
        var machine = CoordinatorStateMachineTests.machine(jobs: [Self.jobA: 2])
        let done = Self.stored(done: 2, of: 2)
        machine.backgroundStarted(Self.jobA)
        #expect(machine.sweepAction(Self.jobA, done) == nil)
        machine.backgroundEnded(Self.jobA)
        _ = machine.jobStalled(Self.jobA)
        #expect(machine.sweepAction(Self.jobA, done) == nil)
        machine.jobResumed(Self.jobA)
        #expect(machine.sweepAction(Self.jobA, done) == .stitch)
    }

    @Test func aTwoPassJobsFirstPassStartsItsSecondThenStitches() {
        var machine = CoordinatorStateMachineTests.machine()
        machine.jobLoaded(Self.jobA, segments: [0, 1], outstanding: [0, 1], payloadBytes: 10, pass: .first)
        #expect(machine.sweepAction(Self.jobA, Self.stored(done: 1, of: 2)) == nil)
        #expect(machine.sweepAction(Self.jobA, Self.stored(done: 2, of: 2)) == .allocateSecondPass)
        machine.backgroundStarted(Self.jobA)
        #expect(machine.sweepAction(Self.jobA, Self.stored(done: 2, of: 2)) == nil, "allocating")
        machine.backgroundEnded(Self.jobA)
        machine.jobLoaded(Self.jobA, segments: [0, 1], outstanding: [0, 1], payloadBytes: 10, pass: .second)
        #expect(machine.sweepAction(Self.jobA, Self.stored(done: 0, of: 2)) == nil, "the second pass sent its segments back")
        #expect(machine.sweepAction(Self.jobA, Self.stored(done: 2, of: 2)) == .stitch)
    }

    @Test func anEndedJobIsForgottenAndATakenOneLetGo() {
        let machine = CoordinatorStateMachineTests.machine(jobs: [Self.jobA: 2])
        for state in [JobState.done, .failed, .canceled] {
            #expect(machine.sweepAction(Self.jobA, Self.stored(state, done: 1, of: 2)) == .forget, "\(state)")
        }
        #expect(machine.sweepAction(Self.jobA, Self.stored(done: 2, of: 2, heldHere: false)) == .lost)
        #expect(machine.sweepAction(Self.jobA, Self.stored(.done, done: 2, of: 2, heldHere: false)) == .lost,
                "another's to clean up, its spool kept")
    }
}
