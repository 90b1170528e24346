import Dispatch
import Synchronization

/// State under a `Mutex` that a thread can wait on until another thread's change satisfies it: the
/// condition-variable pattern, built from parts the compiler checks. A change wakes every waiter, and each
/// looks again.
final class WaitableState<State: Sendable>: Sendable {
    private struct Guarded {
        var state: State
        /// One per waiting thread, signalled at the next change.
        var waiters: [DispatchSemaphore] = []
    }

    private let guarded: Mutex<Guarded>

    init(_ state: State) { guarded = Mutex(Guarded(state: state)) }

    /// Changes the state under the lock, then wakes every waiter.
    func change<R: Sendable, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        let (result, waiters) = try guarded.withLock { (guarded: inout Guarded) throws(E) -> (R, [DispatchSemaphore]) in
            let result = try body(&guarded.state)
            defer { guarded.waiters.removeAll() }
            return (result, guarded.waiters)
        }
        for waiter in waiters { waiter.signal() }
        return result
    }

    /// Waits until `body`, run under the lock now and after each change, returns a value; it changes the
    /// state only then, and that change wakes the other waiters.
    func wait<R: Sendable>(until body: (inout State) -> R?) -> R {
        // Made only once this thread has to wait (most calls find the state as they want it).
        var woken: DispatchSemaphore?
        while true {
            let (result, waiters) = guarded.withLock { (guarded: inout Guarded) -> (R?, [DispatchSemaphore]) in
                guard let result = body(&guarded.state) else {
                    let semaphore = woken ?? DispatchSemaphore(value: 0)
                    woken = semaphore
                    guarded.waiters.append(semaphore)
                    return (nil, [])
                }
                defer { guarded.waiters.removeAll() }
                return (result, guarded.waiters)
            }
            if let result {
                for waiter in waiters { waiter.signal() }
                return result
            }
            woken?.wait()
        }
    }
}
