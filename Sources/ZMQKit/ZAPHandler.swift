import CZeroMQ

/// The ZAP (ZeroMQ RFC 27) handler of a context: libzmq asks it about every CURVE handshake on that
/// context's server sockets, and it answers with `authorize`. Bind it before any server socket binds: a
/// CURVE server whose context has no handler accepts every client key. Serve it continuously from one
/// thread (`serve`), since handshakes wait for its answers.
public final class ZAPHandler {
    /// The endpoint libzmq sends ZAP requests to, fixed by the RFC.
    static let endpoint = "inproc://zeromq.zap.01"

    /// What the handler was asked: the client's address and public key (Z85).
    public struct Request: Sendable, Equatable {
        public var address: String
        public var publicKey: String
    }

    let socket: ZMQSocket

    public init(_ context: ZMQContext) throws(ZMQError) {
        socket = try ZMQSocket(context, .rep)
        try socket.bind(Self.endpoint)
    }

    public func close() { socket.close() }

    /// Answers the requests that arrive within `timeout` seconds. An accepted client's user id is its
    /// public key, which every message it sends then carries (`ReceivedFrame.userID`).
    public func serve(timeout: Double, authorize: (Request) -> Bool) throws(ZMQError) {
        var wait: Double? = timeout
        while let frames = try socket.receive(timeout: wait) {
            wait = 0
            try socket.send(Self.reply(to: frames, authorize: authorize))
        }
    }

    /// The reply frames to one request: 200 with the key as user id, or 400.
    static func reply(to frames: [[UInt8]], authorize: (Request) -> Bool) -> [[UInt8]] {
        let requestID = frames.count > 1 ? frames[1] : []
        func answer(_ code: String, _ text: String, user: String = "") -> [[UInt8]] {
            [Array("1.0".utf8), requestID, Array(code.utf8), Array(text.utf8), Array(user.utf8), []]
        }
        guard frames.count >= 7, frames[0] == Array("1.0".utf8) else { return answer("500", "malformed request") }
        guard String(decoding: frames[5], as: UTF8.self) == "CURVE", let key = CurveKeyPair.z85(frames[6]) else {
            return answer("400", "CURVE required")
        }
        let request = Request(address: String(decoding: frames[3], as: UTF8.self), publicKey: key)
        return authorize(request) ? answer("200", "OK", user: key) : answer("400", "key not authorized")
    }
}

// Safe: bound on one thread, then served by one other, and a thread's start is the barrier libzmq asks for.
extension ZAPHandler: @unchecked Sendable {}
