import CZeroMQ

/// A CURVE key pair as libzmq writes keys: 40 Z85 characters each (32 bytes).
public struct CurveKeyPair: Sendable, Equatable {
    public let publicKey: String
    public let secretKey: String

    /// A new key pair from libsodium's generator.
    public static func generate() throws(ZMQError) -> CurveKeyPair {
        var publicKey = [CChar](repeating: 0, count: 41), secretKey = [CChar](repeating: 0, count: 41)
        try check(zmq_curve_keypair(&publicKey, &secretKey), "zmq_curve_keypair")
        return CurveKeyPair(publicKey: String(nulTerminated: publicKey), secretKey: String(nulTerminated: secretKey))
    }

    /// The pair whose secret key is `secretKey`; nil when it is not a Z85 key.
    public init?(secretKey: String) {
        guard CurveKeyPair.isKey(secretKey) else { return nil }
        var publicKey = [CChar](repeating: 0, count: 41)
        guard zmq_curve_public(&publicKey, secretKey) == 0 else { return nil }
        self.init(publicKey: String(nulTerminated: publicKey), secretKey: secretKey)
    }

    init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Whether `text` is a key libzmq accepts: 40 characters of Z85 that decode to 32 bytes.
    public static func isKey(_ text: String) -> Bool {
        guard text.utf8.count == 40 else { return false }
        var bytes = [UInt8](repeating: 0, count: 32)
        return zmq_z85_decode(&bytes, text) != nil
    }

    /// The Z85 form of a raw 32-byte key (what a ZAP request carries).
    public static func z85(_ raw: [UInt8]) -> String? {
        guard raw.count == 32 else { return nil }
        var text = [CChar](repeating: 0, count: 41)
        return zmq_z85_encode(&text, raw, raw.count) == nil ? nil : String(nulTerminated: text)
    }

    /// Whether this libzmq was built with CURVE (libsodium).
    public static var available: Bool { zmq_has("curve") == 1 }
}

extension ZMQSocket {
    /// Makes this socket a CURVE server with `secretKey`: every connection is encrypted, and a ZAP
    /// handler (`ZAPHandler`, started before this socket binds) decides which clients may connect.
    public func setCurveServer(secretKey: String) throws(ZMQError) {
        try setOption(ZMQ_CURVE_SERVER, Int32(1))
        try setText(ZMQ_CURVE_SECRETKEY, secretKey, "ZMQ_CURVE_SECRETKEY")
        // A domain makes libzmq ask the ZAP handler about every connection.
        try setText(ZMQ_ZAP_DOMAIN, "tessera", "ZMQ_ZAP_DOMAIN")
    }

    /// Makes this socket a CURVE client of the server whose public key is `serverKey`.
    public func setCurveClient(serverKey: String, keys: CurveKeyPair) throws(ZMQError) {
        try setText(ZMQ_CURVE_SERVERKEY, serverKey, "ZMQ_CURVE_SERVERKEY")
        try setText(ZMQ_CURVE_PUBLICKEY, keys.publicKey, "ZMQ_CURVE_PUBLICKEY")
        try setText(ZMQ_CURVE_SECRETKEY, keys.secretKey, "ZMQ_CURVE_SECRETKEY")
    }

    func setText(_ option: Int32, _ text: String, _ name: String) throws(ZMQError) {
        let bytes = Array(text.utf8)
        try check(zmq_setsockopt(handle, option, bytes, bytes.count), "zmq_setsockopt(\(name))")
    }
}

extension ReceivedFrame {
    /// The peer's authenticated user id, as a ZAP handler named it (`ZAPHandler`: the client's public
    /// key); nil on connections without one.
    public var userID: String? {
        guard let value = zmq_msg_gets(message, "User-Id") else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}

extension String {
    /// The text of a NUL-terminated C buffer.
    init(nulTerminated buffer: [CChar]) {
        self = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
