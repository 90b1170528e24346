import CZeroMQ
@testable import ZMQKit

extension ZMQSocket {
    /// Messages libzmq reads ahead from a connection before the application takes them (ZMQ_RCVHWM);
    /// beyond it, it stops reading and the sender's side holds them.
    func setReceiveHighWaterMark(_ messages: Int32) throws(ZMQError) { try setOption(ZMQ_RCVHWM, messages) }
}
