import Synchronization
import TesseraCore
import ZMQKit

/// Where encode threads leave their results for the worker's socket thread, ringing its doorbell so that
/// it sends them at once.
final class WorkerOutbox: Sendable {
    private let queue = Mutex<[ClusterMessage]>([])
    let doorbell = Doorbell()

    func post(_ message: ClusterMessage) {
        queue.withLock { $0.append(message) }
        doorbell.ring()
    }

    /// Puts back, first, messages taken but not sent (no connection took them).
    func putBack(_ messages: some Collection<ClusterMessage>) {
        guard !messages.isEmpty else { return }
        queue.withLock { $0.insert(contentsOf: messages, at: 0) }
    }

    /// Everything posted so far, in order; the outbox is left empty.
    func takeAll() -> [ClusterMessage] {
        queue.withLock { queue in
            defer { queue.removeAll() }
            return queue
        }
    }
}
