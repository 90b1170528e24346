import Testing
@testable import TesseraCore

@Suite struct ClusterMessageTests {
    static let all: [ClusterMessage] = [
        .ready(.init(workerID: "w-1", host: "node7", slots: 2, capabilities: ["libx264": "164", "threads": "4"])),
        .ready(.init(workerID: "w-2", host: "node8", slots: 1, capabilities: [:],
                     inFlight: [.init(segment: .init(jobID: "j", index: 1), token: "9f3c")])),
        .heartbeat,
        .task(.init(segment: .init(jobID: "j", index: 3), attempt: 1, token: "9f3c"), payload: [1, 2, 3]),
        .result(.init(segment: .init(jobID: "j", index: 3), attempt: 1, token: "9f3c", checksum: "abc"), payload: Array(repeating: 7, count: 1000)),
        .failure(.init(segment: .init(jobID: "j", index: 4), attempt: 2, token: "77aa", error: "decoder returned 3 frames")),
        .cancel(jobID: "j"),
        .bye(handedBack: [.init(jobID: "j", index: 5)]),
        .busy(.init(segment: .init(jobID: "j", index: 6), token: "5e")),
        .refused(.init(.wireVersion, "the coordinator speaks wire protocol version 3, this worker 2")),
    ]

    /// A refusal is sent with version byte 0, which every release from version 3 reads; no other kind is.
    @Test func aRefusalIsReadableWhateverTheVersion() throws {
        let frame = ClusterMessage.refused(.init(.idBoundToAnotherKey, "why")).frames()[0]
        #expect(frame[3] == 0)
        #expect(try ClusterMessage(frames: [frame]) == .refused(.init(.idBoundToAnotherKey, "why")))
        #expect(throws: WireError.unsupportedVersion(0)) { _ = try ClusterMessage(frames: [Array("TSR".utf8) + [0, 2] + Array("{}".utf8)]) }
        #expect(throws: WireError.unsupportedVersion(2)) {
            _ = try ClusterMessage(frames: [Array("TSR".utf8) + [2, 10] + Array(#"{"reason":"wire_version","detail":""}"#.utf8)])
        }
    }

    @Test(arguments: all)
    func roundTrips(_ message: ClusterMessage) throws {
        #expect(try ClusterMessage(frames: message.frames()) == message)
    }

    /// Parsed from its header frame alone (the payload read in place by the caller): the same message
    /// with an empty payload, and the same frame-count checks.
    @Test(arguments: all)
    func parsesFromItsHeaderFrame(_ message: ClusterMessage) throws {
        let frames = message.frames()
        let parsed = try ClusterMessage(head: frames[0], payloadFrames: frames.count - 1)
        switch (parsed, message) {
        case (.task(let a, let payload), .task(let b, _)): #expect(a == b && payload.isEmpty)
        case (.result(let a, let payload), .result(let b, _)): #expect(a == b && payload.isEmpty)
        default: #expect(parsed == message)
        }
        #expect(throws: WireError.self) { _ = try ClusterMessage(head: frames[0], payloadFrames: frames.count) }
    }

    @Test func refusesWhatItDoesNotUnderstand() {
        #expect(throws: WireError.empty) { _ = try ClusterMessage(frames: []) }
        #expect(throws: WireError.notTessera) { _ = try ClusterMessage(frames: [Array("GET / HTTP/1.1".utf8)]) }
        #expect(throws: WireError.unsupportedVersion(9)) { _ = try ClusterMessage(frames: [Array("TSR".utf8) + [9, 2]]) }
        // Version 1 carried no lease tokens: its peers are refused.
        #expect(throws: WireError.unsupportedVersion(1)) { _ = try ClusterMessage(frames: [Array("TSR".utf8) + [1, 2]]) }
        let version = ClusterMessage.version
        #expect(throws: WireError.unknownKind(99)) { _ = try ClusterMessage(frames: [Array("TSR".utf8) + [version, 99]]) }
        #expect(throws: WireError.wrongFrameCount(kind: "task", 1)) {
            let task = ClusterMessageTests.all.first { if case .task = $0 { true } else { false } }
            _ = try ClusterMessage(frames: [task!.frames()[0]])
        }
        #expect(throws: WireError.badHeader("ready")) { _ = try ClusterMessage(frames: [Array("TSR".utf8) + [version, 1] + Array("{".utf8)]) }
        #expect(throws: WireError.badHeader("result")) {
            _ = try ClusterMessage(frames: [Array("TSR".utf8) + [version, 4] + Array(#"{"segment":{"jobID":"j","index":1},"attempt":1,"checksum":"0"}"#.utf8), []])
        }
    }

    /// Random and mutated frames are refused with an error, never a crash.
    @Test func garbageNeverCrashes() {
        var rng = SystemRandomNumberGenerator()
        var refused = 0
        for i in 0..<5000 {
            var frames = ClusterMessageTests.all[i % ClusterMessageTests.all.count].frames()
            let f = Int.random(in: 0..<frames.count, using: &rng)
            if frames[f].isEmpty || i % 3 == 0 {
                frames[f] = (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            } else {
                let at = Int.random(in: 0..<frames[f].count, using: &rng)
                frames[f][at] = UInt8.random(in: 0...255, using: &rng)
            }
            if i % 7 == 0 { frames.append([1]) }
            if (try? ClusterMessage(frames: frames)) == nil { refused += 1 }
        }
        #expect(refused > 1000)
    }
}

extension ClusterMessage: CustomTestStringConvertible {
    public var testDescription: String { String(describing: self).prefix(40).description }
}
