import Synchronization
import TesseraCore
import TesseraStore

/// Store connections the coordinator's job threads have finished with, kept for the next one to take: a
/// planning or stitching thread starts without connecting (a new session costs the server a process and
/// an authentication, milliseconds on a short job's critical path). At most `capacity` wait; a store
/// whose work failed is closed, not kept.
final class StoreShelf: Sendable {
    /// A store moves between threads only through the shelf (`sending` in and out), used by one at a time.
    private let idle = Mutex<[UnsafeTransfer<any CoordinatorStore>]>([])
    let capacity: Int

    init(capacity: Int = 4) {
        self.capacity = capacity
    }

    /// A connected store left by an earlier thread, if any.
    func take() -> sending (any CoordinatorStore)? {
        while let store = idle.withLock({ $0.popLast() })?.value {
            if store.isConnected { return store }
            store.close()
        }
        return nil
    }

    /// Keeps `store` for the next thread, or closes it when the shelf is full.
    func put(_ store: sending any CoordinatorStore) {
        let sent = UnsafeTransfer(store)
        let kept = idle.withLock { (stores: inout [UnsafeTransfer<any CoordinatorStore>]) -> Bool in
            guard stores.count < capacity else { return false }
            stores.append(sent)
            return true
        }
        if !kept { sent.value.close() }
    }

    /// Closes every store kept.
    func closeAll() {
        for stored in idle.withLock({ stores in defer { stores.removeAll() }; return stores }) { stored.value.close() }
    }
}
