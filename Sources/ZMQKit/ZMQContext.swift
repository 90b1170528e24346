import CZeroMQ
import Synchronization

/// A libzmq context. Closing it (`zmq_ctx_term`) blocks until every socket is closed, so it is explicit:
/// close all sockets, then the context. Thread-safe, as libzmq contexts are.
public final class ZMQContext: Sendable {
    /// libzmq contexts are thread-safe, and the pointer itself never changes after init.
    nonisolated(unsafe) let handle: UnsafeMutableRawPointer
    /// Set once, by the first `close()`.
    private let closed = Atomic(false)

    /// A context whose sockets' traffic runs on `ioThreads` threads of libzmq's (its framing, and with
    /// CURVE its encryption; a connection stays on one of them).
    public init(ioThreads: Int = 1) throws(ZMQError) {
        guard let ctx = zmq_ctx_new() else { throw ZMQError(call: "zmq_ctx_new") }
        if ioThreads != 1, zmq_ctx_set(ctx, ZMQ_IO_THREADS, Int32(ioThreads)) != 0 {
            let error = ZMQError(call: "zmq_ctx_set(ZMQ_IO_THREADS)")
            zmq_ctx_term(ctx)
            throw error
        }
        handle = ctx
    }

    deinit {
        let closed = closed.load(ordering: .acquiring)
        assert(closed, "ZMQContext released without close()")
        if !closed { zmq_ctx_term(handle) }
    }

    /// Terminates the context; call after closing its sockets.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }

    public static var version: String {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }
}
