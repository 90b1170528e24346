import Synchronization
import TesseraStore

/// Store connections the coordinator's job threads have finished with, kept for the next one to take: a
/// planning or stitching thread starts without connecting (a new session costs the server a process and
/// an authentication, milliseconds on a short job's critical path). At most `capacity` wait; a store
/// whose work failed is closed, not kept.
final class StoreShelf: Sendable {
    /// A store moves between threads only through the shelf, and is used by one thread at a time.
    private struct Stored: @unchecked Sendable { let store: any CoordinatorStore }
    private let idle = Mutex<[Stored]>([])
    let capacity: Int

    init(capacity: Int = 4) {
        self.capacity = capacity
    }

    /// A connected store left by an earlier thread, if any.
    func take() -> (any CoordinatorStore)? {
        while let stored = idle.withLock({ $0.popLast() }) {
            if stored.store.isConnected { return stored.store }
            stored.store.close()
        }
        return nil
    }

    /// Keeps `store` for the next thread, or closes it when the shelf is full.
    func put(_ store: any CoordinatorStore) {
        let kept = idle.withLock { (stores: inout [Stored]) -> Bool in
            guard stores.count < capacity else { return false }
            stores.append(Stored(store: store))
            return true
        }
        if !kept { store.close() }
    }

    /// Closes every store kept.
    func closeAll() {
        for stored in idle.withLock({ stores in defer { stores.removeAll() }; return stores }) { stored.store.close() }
    }
}
