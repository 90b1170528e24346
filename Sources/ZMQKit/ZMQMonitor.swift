import CZeroMQ
import Synchronization

/// What libzmq reports about a socket's connections (`zmq_socket_monitor`), read without blocking:
/// whether its handshakes succeed, and why not. Confined to the thread of the socket it watches.
public final class ZMQMonitor {
    public enum Event: Equatable, Sendable {
        case connected
        case disconnected
        case handshakeSucceeded
        /// The peer's ZAP handler refused this side's key (CURVE: the key is not authorized there).
        case handshakeRefused(status: Int)
        /// The handshake broke off (CURVE: the server key is not the server's, or the mechanisms differ).
        case handshakeFailed(code: Int)
    }

    /// The handshake code of a CURVE client meeting a plaintext server, or the reverse.
    public static let mechanismMismatch = ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH

    private static let counter = Atomic<Int>(0)
    let socket: ZMQSocket
    let watched: ZMQSocket

    /// Starts monitoring `watched` (before it connects).
    public init(_ context: ZMQContext, watching watched: ZMQSocket) throws(ZMQError) {
        let endpoint = "inproc://tessera-monitor-\(Self.counter.add(1, ordering: .relaxed).newValue)"
        let events = ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED
            | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
        try check(zmq_socket_monitor(watched.handle, endpoint, events), "zmq_socket_monitor")
        self.watched = watched
        socket = try ZMQSocket(context, .pair)
        try socket.connect(endpoint)
    }

    /// Stops the monitoring, then closes the reading end. In that order: libzmq's I/O thread sends every
    /// event with a blocking send, and one sent to a closed reader (the watched socket's disconnect as it
    /// closes) would block it for good, and with it every socket of the context. Before the watched socket closes.
    public func close() {
        _ = zmq_socket_monitor(watched.handle, nil, 0)
        socket.close()
    }

    /// The events reported since the last call.
    public func events() throws(ZMQError) -> [Event] {
        var events: [Event] = []
        while let frames = try socket.receive(timeout: 0) {
            guard let head = frames.first, head.count >= 6 else { continue }
            let kind = Int32(UInt16(head[0]) | UInt16(head[1]) << 8)
            let value = Int(UInt32(head[2]) | UInt32(head[3]) << 8 | UInt32(head[4]) << 16 | UInt32(head[5]) << 24)
            switch kind {
            case ZMQ_EVENT_CONNECTED: events.append(.connected)
            case ZMQ_EVENT_DISCONNECTED: events.append(.disconnected)
            case ZMQ_EVENT_HANDSHAKE_SUCCEEDED: events.append(.handshakeSucceeded)
            case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH: events.append(.handshakeRefused(status: value))
            case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL, ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL: events.append(.handshakeFailed(code: value))
            default: break
            }
        }
        return events
    }
}
