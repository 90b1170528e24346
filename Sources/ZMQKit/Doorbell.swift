import Glibc

/// Lets a thread wake another that waits on a socket (`ZMQSocket.poll(timeout:wake:)`): `ring()` makes
/// `fd` readable until `answer()`. A pipe, because libzmq sockets belong to one thread and `zmq_poll`
/// also waits on plain descriptors.
public final class Doorbell: Sendable {
    // The descriptors never change after init; writes and reads of a pipe are thread-safe.
    public let fd: Int32
    private let writeEnd: Int32

    public init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
        } else {
            ends = [-1, -1]
        }
        fd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        if fd >= 0 { close(fd) }
        if writeEnd >= 0 { close(writeEnd) }
    }

    /// Whether it works (a process out of descriptors gets none; waiters then fall back on timeouts).
    public var isValid: Bool { fd >= 0 }

    /// Wakes the waiter (a full pipe already does).
    public func ring() {
        guard writeEnd >= 0 else { return }
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe, so the next wait blocks until the next ring.
    public func answer() {
        guard fd >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(fd, &buffer, buffer.count) > 0 {}
    }
}
