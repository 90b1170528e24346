import CZeroMQ

/// A failed libzmq call: errno, libzmq's message for it, and the call.
public struct ZMQError: Error, CustomStringConvertible, Sendable {
    public let code: Int32
    public let message: String
    public let call: String

    init(call: String, code: Int32 = zmq_errno()) {
        self.code = code
        self.call = call
        message = String(cString: zmq_strerror(code))
    }

    public var description: String { "\(call): \(message) (errno \(code))" }
}

@inline(__always)
func check(_ result: Int32, _ call: @autoclosure () -> String) throws(ZMQError) {
    if result < 0 { throw ZMQError(call: call()) }
}
