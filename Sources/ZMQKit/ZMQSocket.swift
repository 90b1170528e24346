import CZeroMQ
import Synchronization

/// A libzmq socket. Not thread-safe: confine it to one thread. `close()` before the context closes.
public final class ZMQSocket {
    public enum Kind: Int32, Sendable {
        case router = 6  // ZMQ_ROUTER
        case dealer = 5  // ZMQ_DEALER
        case pair = 0    // ZMQ_PAIR
        case rep = 4     // ZMQ_REP
    }

    var handle: UnsafeMutableRawPointer?
    let held = HeldBytes()

    /// Bytes of large frames sent through this socket that libzmq still holds (queued, or being written
    /// to the connection): what sending ahead of the network costs in memory.
    public var heldBytes: Int { held.bytes }

    public init(_ context: ZMQContext, _ kind: Kind) throws(ZMQError) {
        guard let socket = zmq_socket(context.handle, kind.rawValue) else { throw ZMQError(call: "zmq_socket") }
        handle = socket
        // Closing must not wait for undelivered messages.
        try setOption(ZMQ_LINGER, Int32(0))
    }

    deinit { close() }

    public func close() {
        if let handle { zmq_close(handle) }
        handle = nil
    }

    func setOption<T>(_ option: Int32, _ value: T) throws(ZMQError) {
        try check(withUnsafeBytes(of: value) { zmq_setsockopt(handle, option, $0.baseAddress, $0.count) }, "zmq_setsockopt(\(option))")
    }

    /// How long close() may wait to deliver queued messages (0: drop them).
    public func setLinger(milliseconds: Int32) throws(ZMQError) { try setOption(ZMQ_LINGER, milliseconds) }

    /// Frames larger than this are refused by the socket (ZMQ_MAXMSGSIZE); the peer is disconnected.
    public func setMaximumMessageSize(_ bytes: Int64) throws(ZMQError) { try setOption(ZMQ_MAXMSGSIZE, bytes) }

    /// ZMTP heartbeats: a PING every `interval` seconds, and the connection is closed (what was queued
    /// for it freed) when nothing came from the peer for `timeout` seconds.
    public func setHeartbeat(interval: Double, timeout: Double) throws(ZMQError) {
        try setOption(ZMQ_HEARTBEAT_IVL, Int32(clamping: Int((interval * 1000).rounded(.up))))
        try setOption(ZMQ_HEARTBEAT_TIMEOUT, Int32(clamping: Int((timeout * 1000).rounded(.up))))
    }

    /// How long a send may wait for a connection to take the message before it fails with EAGAIN.
    public func setSendTimeout(seconds: Double) throws(ZMQError) { try setOption(ZMQ_SNDTIMEO, Int32(seconds * 1000)) }

    /// How long libzmq waits before reconnecting a dropped or refused connection, doubling up to `maximum`.
    public func setReconnectInterval(seconds: Double, maximum: Double) throws(ZMQError) {
        try setOption(ZMQ_RECONNECT_IVL, Int32(seconds * 1000))
        try setOption(ZMQ_RECONNECT_IVL_MAX, Int32(maximum * 1000))
    }

    /// ROUTER: whether a peer connecting with an identity already in use takes it over; off, the new
    /// connection is neither heard nor sent to until the old one is gone.
    public func setHandover(_ on: Bool) throws(ZMQError) { try setOption(ZMQ_ROUTER_HANDOVER, Int32(on ? 1 : 0)) }

    /// The identity a ROUTER sees for this DEALER.
    public func setRoutingID(_ id: [UInt8]) throws(ZMQError) {
        try check(zmq_setsockopt(handle, ZMQ_ROUTING_ID, id, id.count), "zmq_setsockopt(ZMQ_ROUTING_ID)")
    }

    public func bind(_ endpoint: String) throws(ZMQError) { try check(zmq_bind(handle, endpoint), "zmq_bind(\(endpoint))") }
    public func connect(_ endpoint: String) throws(ZMQError) { try check(zmq_connect(handle, endpoint), "zmq_connect(\(endpoint))") }

    /// The endpoint actually bound (resolves `tcp://127.0.0.1:*`).
    public var lastEndpoint: String? {
        var buffer = [CChar](repeating: 0, count: 1024)
        var size = buffer.count
        guard zmq_getsockopt(handle, ZMQ_LAST_ENDPOINT, &buffer, &size) == 0 else { return nil }
        return String(nulTerminated: buffer)
    }

    /// Frames at least this large are handed to libzmq without a copy (`zmq_msg_init_data`).
    static let zeroCopyBytes = 64 * 1024

    /// Sends one message of several frames. Large frames (a segment's packets) are not copied: libzmq
    /// holds the array until its I/O thread has written it, which spares a copy into fresh pages. Their
    /// bytes count in `heldBytes` and, when given, in `peerHeld` (what one peer's connection holds) until
    /// libzmq lets them go.
    public func send(_ frames: [[UInt8]], peerHeld: HeldBytes? = nil) throws(ZMQError) {
        for (i, frame) in frames.enumerated() {
            let flags = i + 1 < frames.count ? ZMQ_SNDMORE : 0
            var rc: Int32 = -1
            if frame.count >= Self.zeroCopyBytes {
                var message = zmq_msg_t()
                let box = Unmanaged.passRetained(FrameStorage(frame, held, peerHeld))
                let data = UnsafeMutableRawPointer(mutating: box.takeUnretainedValue().base)
                guard zmq_msg_init_data(&message, data, frame.count, releaseFrameStorage, box.toOpaque()) == 0 else {
                    box.release()
                    throw ZMQError(call: "zmq_msg_init_data")
                }
                repeat { rc = zmq_msg_send(&message, handle, flags) } while rc < 0 && zmq_errno() == EINTR
                // Sent: libzmq owns the message now. Not sent: it is still ours to close (which frees it).
                if rc < 0 { zmq_msg_close(&message) }
            } else {
                repeat {
                    rc = frame.withUnsafeBytes { zmq_send(handle, $0.baseAddress, $0.count, flags) }
                } while rc < 0 && zmq_errno() == EINTR
            }
            try check(rc, "zmq_send")
        }
    }

    /// Waits up to `timeout` seconds (nil: forever) for a message; nil when none arrived in time, or when
    /// the file descriptor `wake` became readable first (see `poll`).
    public func receive(timeout: Double?, wake: Int32? = nil) throws(ZMQError) -> [[UInt8]]? {
        try receiveFrames(timeout: timeout, wake: wake.map { [$0] } ?? [])?.map(\.bytes)
    }

    /// As `receive`, with each frame left in the buffer libzmq received it into: a payload of megabytes
    /// is read in place instead of copied.
    public func receiveFrames(timeout: Double?, wake: [Int32] = [], woken: (Int32) -> Void = { _ in }) throws(ZMQError) -> [ReceivedFrame]? {
        guard try poll(timeout: timeout, wake: wake, woken: woken) else { return nil }
        var frames: [ReceivedFrame] = []
        while true {
            let frame = ReceivedFrame()
            var rc: Int32 = -1
            repeat { rc = zmq_msg_recv(frame.message, handle, 0) } while rc < 0 && zmq_errno() == EINTR
            try check(rc, "zmq_msg_recv")
            frames.append(frame)
            guard zmq_msg_more(frame.message) == 1 else { return frames }
        }
    }

    /// Whether a message is waiting, waiting up to `timeout` seconds (nil: forever), or less when one of
    /// the file descriptors `wake` (another thread's doorbell, a database connection's socket) becomes
    /// readable; reading it is the caller's. `woken` hears which of them are readable.
    public func poll(timeout: Double?, wake: [Int32] = [], woken: (Int32) -> Void = { _ in }) throws(ZMQError) -> Bool {
        var items = [zmq_pollitem_t(socket: handle, fd: 0, events: Int16(ZMQ_POLLIN), revents: 0)]
        items += wake.map { zmq_pollitem_t(socket: nil, fd: $0, events: Int16(ZMQ_POLLIN), revents: 0) }
        let ms: Int = timeout.map { max(0, Int(($0 * 1000).rounded(.up))) } ?? -1
        var rc: Int32 = -1
        repeat { rc = zmq_poll(&items, Int32(items.count), ms) } while rc < 0 && zmq_errno() == EINTR
        try check(rc, "zmq_poll")
        for item in items.dropFirst() where item.revents & Int16(ZMQ_POLLIN) != 0 { woken(item.fd) }
        return rc > 0 && items[0].revents & Int16(ZMQ_POLLIN) != 0
    }
}

/// One frame of a received message, in libzmq's buffer until this goes (the buffer is not written to
/// after receipt, so it may be read from any thread).
public final class ReceivedFrame {
    let message = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: 1)

    init() { zmq_msg_init(message) }

    deinit {
        zmq_msg_close(message)
        message.deallocate()
    }

    public var count: Int { zmq_msg_size(message) }

    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let size = zmq_msg_size(message)
        guard size > 0, let data = zmq_msg_data(message) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: data, count: size))
    }

    /// A copy of the bytes.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

// Safe: libzmq writes the buffer only before it is received here; after that it is read, then freed in deinit.
extension ReceivedFrame: @unchecked Sendable {}

/// Bytes of large frames libzmq holds, sent but not yet written to the connection: a count shared
/// with libzmq's I/O thread, which releases frames.
public final class HeldBytes: Sendable {
    let value = Atomic<Int>(0)

    public init() {}

    public var bytes: Int { value.load(ordering: .relaxed) }
}

/// Keeps a frame's bytes alive, at a fixed address, while libzmq sends them.
final class FrameStorage {
    let bytes: [UInt8]
    let base: UnsafeRawPointer
    let held: HeldBytes
    let peerHeld: HeldBytes?

    init(_ bytes: [UInt8], _ held: HeldBytes, _ peerHeld: HeldBytes?) {
        // A contiguous copy-on-write buffer: its address holds while this reference keeps it alive and
        // nothing writes to it (`bytes` is a constant).
        self.bytes = bytes
        self.held = held
        self.peerHeld = peerHeld
        base = bytes.withUnsafeBytes { $0.baseAddress! }
        held.value.add(bytes.count, ordering: .relaxed)
        peerHeld?.value.add(bytes.count, ordering: .relaxed)
    }

    deinit {
        held.value.subtract(bytes.count, ordering: .relaxed)
        peerHeld?.value.subtract(bytes.count, ordering: .relaxed)
    }
}

/// libzmq's free function for zero-copy frames (called on whichever thread drops the last reference).
private let releaseFrameStorage: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { _, hint in
    if let hint { Unmanaged<FrameStorage>.fromOpaque(hint).release() }
}
