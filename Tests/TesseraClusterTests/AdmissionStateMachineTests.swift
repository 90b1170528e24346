import Testing
import TesseraCore
@testable import TesseraCluster

/// What the coordinator makes of a worker's message before reading what it says, which leases a (re)joining
/// worker keeps, and the encoders a plan counts on. No socket, store or process.
struct AdmissionStateMachineTests {
    typealias Machine = CoordinatorStateMachine
    typealias Ref = ClusterMessage.SegmentRef
    static let jobA = CoordinatorStateMachineTests.jobA

    static func result(_ job: String, _ index: Int) -> Result<ClusterMessage, WireError> {
        .success(.result(.init(segment: Ref(jobID: job, index: index), attempt: 1, token: "t", checksum: "c"), payload: []))
    }

    static func ready(_ id: String) -> Result<ClusterMessage, WireError> {
        .success(.ready(.init(workerID: id, host: "h", slots: 1, capabilities: [:])))
    }

    static func arrive(_ machine: inout Machine, _ identity: String, _ parsed: Result<ClusterMessage, WireError>,
                       _ credential: Machine.Credential = .plaintext, now: Double = 1) -> Machine.Admission {
        machine.messageArrived(from: Array(identity.utf8), parsed, credential: credential, now: now)
    }

    // MARK: Refusals

    @Test func aWellFormedMessageIsAcceptedAndCountsAsHeard() {
        var machine = CoordinatorStateMachineTests.machine(workers: ["w1": 1])
        #expect(Self.arrive(&machine, "w1", .success(.heartbeat), now: 2) == .accept(worker: "w1", recordResultsFirst: false))
        #expect(machine.peers["w1"]?.lastHeard == 2)
        #expect(Self.arrive(&machine, "w1", Self.result(Self.jobA, 0)) == .accept(worker: "w1", recordResultsFirst: false))
        #expect(Self.arrive(&machine, "w1", .success(.bye(handedBack: []))) == .accept(worker: "w1", recordResultsFirst: true),
                "a bye hands leases back: the results received are recorded first")
    }

    @Test func anUnacceptableIdentityIsDroppedBeforeAnythingElse() {
        var machine = CoordinatorStateMachineTests.machine()
        let notUTF8 = machine.messageArrived(from: [0xff, 0xfe], .success(.heartbeat), credential: .plaintext, now: 1)
        #expect(notUTF8 == .drop(.unacceptableIdentity))
        #expect(Self.arrive(&machine, "w 1", .success(.heartbeat)) == .drop(.unacceptableIdentity))
        #expect(Self.arrive(&machine, "", .failure(.notTessera), .curve(key: nil, authorized: false)) == .drop(.unacceptableIdentity))
    }

    @Test func aMalformedMessageIsDropped() {
        var machine = CoordinatorStateMachineTests.machine(workers: ["w1": 1])
        #expect(Self.arrive(&machine, "w1", .failure(.badHeader("result")), now: 5) == .drop(.malformed))
        #expect(Self.arrive(&machine, "w1", .failure(.unsupportedVersion(2)), now: 5) == .drop(.otherWireVersion(2)),
                "another release is told, not ignored")
        #expect(machine.peers["w1"]?.lastHeard == 0, "a dropped message is not heard")
    }

    @Test func aJobIDThatIsNotAUUIDIsDropped() {
        var machine = CoordinatorStateMachineTests.machine(workers: ["w1": 1])
        #expect(Self.arrive(&machine, "w1", Self.result("not-a-uuid", 0)) == .drop(.notAJobID))
        let bye = ClusterMessage.bye(handedBack: [Ref(jobID: Self.jobA, index: 0), Ref(jobID: "../etc", index: 1)])
        #expect(Self.arrive(&machine, "w1", .success(bye)) == .drop(.notAJobID))
    }

    @Test func anUnauthorizedKeyIsRefused() {
        var machine = CoordinatorStateMachineTests.machine()
        _ = machine.workerReady("w1", slots: 1, skipsEncode: false, key: "K1", working: [], now: 0)
        #expect(Self.arrive(&machine, "w1", Self.result(Self.jobA, 0), .curve(key: "K1", authorized: false), now: 3)
                == .refuse(worker: "w1", .unauthorizedKey), "revoked since it joined")
        #expect(Self.arrive(&machine, "w2", Self.ready("w2"), .curve(key: nil, authorized: false)) == .refuse(worker: "w2", .unauthorizedKey))
        #expect(machine.peers["w1"]?.lastHeard == 0, "a refused message is not heard")
        #expect(!machine.isConnected("w2"))
    }

    @Test func aKeyOtherThanTheOneItJoinedWithIsRefused() {
        var machine = CoordinatorStateMachineTests.machine()
        _ = machine.workerReady("w1", slots: 1, skipsEncode: false, key: "K1", working: [], now: 0)
        #expect(Self.arrive(&machine, "w1", .success(.heartbeat), .curve(key: "K2", authorized: true)) == .refuse(worker: "w1", .keyChanged))
        #expect(Self.arrive(&machine, "w1", .success(.heartbeat), .curve(key: "K1", authorized: true))
                == .accept(worker: "w1", recordResultsFirst: false))
        #expect(Self.arrive(&machine, "w2", Self.ready("w2"), .curve(key: "K2", authorized: true))
                == .accept(worker: "w2", recordResultsFirst: true), "a worker not joined yet may use any authorized key")
    }

    @Test func aReadyWhoseIDIsNotItsIdentityIsDropped() {
        var machine = CoordinatorStateMachineTests.machine()
        #expect(Self.arrive(&machine, "w1", Self.ready("w2")) == .drop(.readyNotItsIdentity))
        #expect(Self.arrive(&machine, "w1", Self.ready("w1")) == .accept(worker: "w1", recordResultsFirst: true))
    }

    @Test func keyRefusalsSayWhichCheckFailed() {
        #expect(Machine.Refusal.unauthorizedKey.description == "its key is not authorized")
        #expect(Machine.Refusal.keyChanged.description != Machine.Refusal.unauthorizedKey.description)
    }

    // MARK: Kept leases

    @Test func aRejoiningWorkerKeepsTheLeasesItWorksOnUnderTheirToken() {
        var machine = CoordinatorStateMachineTests.machine(jobs: [Self.jobA: 4])
        let refs = (0..<4).map { Ref(jobID: Self.jobA, index: $0) }
        let working = machine.workerReady("w1", slots: 4, skipsEncode: false,
                                          working: [.init(segment: refs[0], token: "a"), .init(segment: refs[2], token: "c"),
                                                    .init(segment: refs[3], token: "d")], now: 1)
        let stored: [ClusterMessage.LeaseRef] = [.init(segment: refs[0], token: "a"), .init(segment: refs[1], token: "b"),
                                                 .init(segment: refs[2], token: "c2")]
        let handBack = machine.storeLeasesFound("w1", stored, working: working)
        #expect(handBack == [refs[1], refs[2]], "not worked on, or under an earlier lease's token")
        #expect(machine.peers["w1"]?.inFlight == [refs[0]: "a"], "a task the store has no lease of is not in flight")
    }

    @Test func aStoreReconnectSortsEachWorkersLeasesTheSameWay() {
        let refs = (0..<3).map { Ref(jobID: Self.jobA, index: $0) }
        let sort = Machine.LeaseSort(stored: [.init(segment: refs[0], token: "a"), .init(segment: refs[1], token: "b")],
                                     working: [refs[0]: "a", refs[2]: "c"])
        #expect(sort.kept == [refs[0]: "a"])
        #expect(sort.handBack == [refs[1]])
        #expect(Machine.LeaseSort(stored: [], working: [refs[0]: "a"]).kept.isEmpty, "only the store's leases are kept")
    }

    // MARK: Encoders

    @Test func thePlannerCountsOneEncoderPerConnectedWorker() {
        var machine = CoordinatorStateMachineTests.machine { $0.heartbeatInterval = 1; $0.liveness = 3 }
        #expect(machine.encoders == 0)
        _ = machine.workerReady("w1", slots: 4, skipsEncode: false, working: [], now: 0)
        _ = machine.workerReady("w2", slots: 1, skipsEncode: false, working: [], now: 0)
        _ = machine.workerReady("w1", slots: 2, skipsEncode: false, working: [], now: 0)
        #expect(machine.encoders == 2, "a worker that joins again counts once")
        machine.workerLeft("w2")
        #expect(machine.encoders == 1)
        _ = machine.tick(now: 10)
        #expect(machine.encoders == 0, "a silent worker counts no more")
    }
}
