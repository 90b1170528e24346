import TesseraCore
import ZMQKit

/// What the coordinator's job threads report back to its loop. Every report rings the loop's doorbell,
/// so the loop, waiting on the workers' socket, turns to it at once rather than at its next timeout
/// (up to 20 ms, paid by a short job at every step: its plan ready, its last result, its stitch done).
final class CoordinatorEvents: Sendable {
    private let queue = Locked<[Coordinator.Event]>([])
    /// Rung by job threads and by the result spooler; answered by the loop.
    let doorbell = Doorbell()

    /// Changes the queue (a job thread appends) and wakes the loop.
    func withValue<R, E: Error>(_ body: (inout [Coordinator.Event]) throws(E) -> R) throws(E) -> R {
        defer { doorbell.ring() }
        return try queue.withValue(body)
    }

    /// Everything reported since the last take, for the loop (no ring).
    func take() -> [Coordinator.Event] {
        queue.withValue { events in
            defer { events.removeAll() }
            return events
        }
    }
}
