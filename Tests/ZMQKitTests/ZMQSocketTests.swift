import Foundation
import Testing
import TesseraCore
@testable import ZMQKit

/// Real ZeroMQ sockets on loopback; each test binds its own ephemeral endpoint.
@Suite struct ZMQSocketTests {
    /// A ROUTER bound to an ephemeral loopback port, closed (with its context) after `body`.
    func withRouter(maximumMessageSize: Int64? = nil, _ body: (ZMQContext, ZMQSocket, String) throws -> Void) throws {
        let context = try ZMQContext()
        defer { context.close() }
        let router = try ZMQSocket(context, .router)
        defer { router.close() }
        if let maximumMessageSize { try router.setMaximumMessageSize(maximumMessageSize) }
        try router.bind("tcp://127.0.0.1:*")
        try body(context, router, try #require(router.lastEndpoint))
    }

    @Test func routerAndDealerExchangeMultipartMessages() throws {
        try withRouter { context, router, endpoint in
            let dealer = try ZMQSocket(context, .dealer)
            defer { dealer.close() }
            try dealer.setRoutingID(Array("worker-1".utf8))
            try dealer.connect(endpoint)

            try dealer.send([[1, 2, 3], Array(repeating: 9, count: 100_000)])
            let received = try #require(try router.receive(timeout: 5))
            #expect(received.count == 3)
            #expect(received[0] == Array("worker-1".utf8))
            #expect(received[1] == [1, 2, 3])
            #expect(received[2].count == 100_000)

            try router.send([received[0], [], [42]])
            #expect(try dealer.receive(timeout: 5) == [[], [42]])
            #expect(try dealer.receive(timeout: 0.05) == nil, "a timeout is nil, not an error")
        }
    }

    /// Large frames go to libzmq without a copy: what arrives is what was sent, even when the sender
    /// changes its array right after (the change copies the buffer, it does not overwrite it).
    @Test func largeFramesArriveIntactWithoutACopy() throws {
        try withRouter { context, router, endpoint in
            let dealer = try ZMQSocket(context, .dealer)
            defer { dealer.close() }
            try dealer.setRoutingID(Array("worker-2".utf8))
            try dealer.connect(endpoint)
            var frame = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 12) }
            let expected = frame
            for _ in 0..<3 { try dealer.send([[7], frame]) }
            frame[0] ^= 0xFF
            frame.removeAll()
            for _ in 0..<2 {
                let received = try #require(try router.receive(timeout: 5))
                #expect(received.count == 3)
                #expect(received[2] == expected)
            }
            // Received in place: the frame stays readable, from another thread, after the socket moved on.
            let frames = try #require(try router.receiveFrames(timeout: 5))
            #expect(frames.map(\.count) == [8, 1, expected.count])
            #expect(try router.receive(timeout: 0.05) == nil)
            let payload = frames[2]
            let same = Locked(false)
            let read = Thread { same.withValue { $0 = payload.withUnsafeBytes { Array($0) } == expected } }
            read.start()
            let deadline = Date().addingTimeInterval(5)
            while read.isExecuting || !read.isFinished, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            #expect(same.current)
            #expect(frames[1].bytes == [7])
        }
    }

    /// A frame over the limit is refused (the peer is dropped); the socket keeps serving others.
    @Test func oversizedMessagesAreRefused() throws {
        try withRouter(maximumMessageSize: 1024) { context, router, endpoint in
            let big = try ZMQSocket(context, .dealer)
            defer { big.close() }
            try big.connect(endpoint)
            try big.send([Array(repeating: 1, count: 4096)])
            #expect(try router.receive(timeout: 0.5) == nil)

            let small = try ZMQSocket(context, .dealer)
            defer { small.close() }
            try small.connect(endpoint)
            try small.send([[7]])
            #expect(try router.receive(timeout: 5)?.last == [7])
        }
    }

    /// Bytes that are not ZMTP on the port are dropped by libzmq; the socket keeps working.
    @Test func garbageOnThePortIsIgnored() throws {
        try withRouter { context, router, endpoint in
            let port = try #require(UInt16(endpoint.split(separator: ":").last ?? ""))

            for _ in 0..<3 {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = port.bigEndian
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Foundation.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                #expect(connected == 0)
                let junk = (0..<512).map { _ in UInt8.random(in: 0...255) }
                _ = junk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                Foundation.close(fd)
        }
        let dealer = try ZMQSocket(context, .dealer)
        defer { dealer.close() }
        try dealer.connect(endpoint)
        try dealer.send(ClusterMessage.heartbeat.frames())

        // libzmq may read junk as legacy ZMTP 1.0 frames and deliver it; the protocol refuses all of it,
        // and the real message still arrives.
        var heard = false
        let deadline = Date().addingTimeInterval(5)
        while !heard, Date() < deadline, let frames = try router.receive(timeout: 1) {
            let message = try? ClusterMessage(frames: Array(frames.dropFirst()))
            if message == .heartbeat { heard = true } else { #expect(message == nil, "junk parsed as \(String(describing: message))") }
        }
        #expect(heard)
        }
    }
}

/// What the coordinator's send window and the worker's doorbell rest on.
extension ZMQSocketTests {
    /// Large frames count as held, for the socket and for the peer they went to, while libzmq has them,
    /// and stop counting once they are on the wire.
    @Test func heldBytesCountLargeFramesUntilTheyLeave() throws {
        try withRouter { context, router, endpoint in
            let dealer = try ZMQSocket(context, .dealer)
            defer { dealer.close() }
            try dealer.setRoutingID(Array("reader".utf8))
            // Its libzmq reads one message ahead, no more: the rest wait on the sender's side.
            try dealer.setReceiveHighWaterMark(1)
            try dealer.connect(endpoint)
            try dealer.send([[1]])
            let identity = try #require(try router.receive(timeout: 5))[0]
            #expect(router.heldBytes == 0)

            // A second peer that reads what it is sent.
            let prompt = try ZMQSocket(context, .dealer)
            defer { prompt.close() }
            try prompt.setRoutingID(Array("prompt".utf8))
            try prompt.connect(endpoint)
            try prompt.send([[2]])
            let promptIdentity = try #require(try router.receive(timeout: 5))[0]

            // More than the connection's buffers and the dealer's read-ahead take while it reads nothing.
            let frame = [UInt8](repeating: 7, count: 32 << 20)
            let readerHeld = HeldBytes(), promptHeld = HeldBytes()
            for _ in 0..<4 { try router.send([identity, frame], peerHeld: readerHeld) }
            try router.send([identity, [1, 2, 3]], peerHeld: readerHeld)  // small frames are copied, never held
            try router.send([promptIdentity, frame], peerHeld: promptHeld)
            #expect(try prompt.receive(timeout: 10)?.first?.count == frame.count)
            let promptDeadline = Date().addingTimeInterval(5)
            while promptHeld.bytes > 0 && Date() < promptDeadline { Thread.sleep(forTimeInterval: 0.01) }
            Thread.sleep(forTimeInterval: 0.2)
            #expect(promptHeld.bytes == 0, "what a peer read stops counting for it")
            #expect(readerHeld.bytes > 0, "the peer that reads nothing still holds its frames")
            #expect(readerHeld.bytes <= 4 * frame.count)
            #expect(router.heldBytes == readerHeld.bytes)

            for _ in 0..<4 { #expect(try dealer.receive(timeout: 10)?.first?.count == frame.count) }
            #expect(try dealer.receive(timeout: 5) == [[1, 2, 3]])
            let deadline = Date().addingTimeInterval(5)
            while router.heldBytes > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            #expect(router.heldBytes == 0)
            #expect(readerHeld.bytes == 0)
        }
    }

    /// A ring from another thread ends a wait at once; the socket's messages still come through.
    @Test func aDoorbellEndsAWait() throws {
        try withRouter { (_: ZMQContext, socket: ZMQSocket, _: String) throws in
            let bell = Doorbell()
            #expect(bell.isValid)
            let started = Date()
            #expect(try socket.receive(timeout: 0.05, wake: bell.fd) == nil, "nothing rang: the timeout")
            #expect(Date().timeIntervalSince(started) >= 0.04)

            DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { bell.ring() }
            let waiting = Date()
            #expect(try socket.receive(timeout: 10, wake: bell.fd) == nil)
            #expect(Date().timeIntervalSince(waiting) < 5, "the ring ended the wait, not the timeout")
            bell.answer()
            let again = Date()
            #expect(try socket.receive(timeout: 0.05, wake: bell.fd) == nil)
            #expect(Date().timeIntervalSince(again) >= 0.04, "answered: the next wait waits")
        }
    }

    /// Several descriptors end a wait; the caller hears which of them are readable.
    @Test func theWaitSaysWhichDescriptorsWoke() throws {
        try withRouter { (_: ZMQContext, socket: ZMQSocket, _: String) throws in
            let first = Doorbell(), second = Doorbell()
            var woken: [Int32] = []
            #expect(try socket.receiveFrames(timeout: 0.02, wake: [first.fd, second.fd], woken: { woken.append($0) }) == nil)
            #expect(woken.isEmpty, "nothing rang")
            second.ring()
            let waiting = Date()
            #expect(try socket.receiveFrames(timeout: 10, wake: [first.fd, second.fd], woken: { woken.append($0) }) == nil)
            #expect(Date().timeIntervalSince(waiting) < 5, "the second descriptor ended the wait")
            #expect(woken == [second.fd])
        }
    }
}
