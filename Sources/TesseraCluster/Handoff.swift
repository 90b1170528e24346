import ServiceLifecycle
import Synchronization

/// A value one service hands to another once it has it: the job's coordinator, the endpoint its workers
/// join. Services that start together but depend on each other wait on one instead of on a start order.
final class Handoff<Value: Sendable>: Sendable {
    private enum State {
        case waiting([CheckedContinuation<Value?, Never>])
        /// nil: withdrawn, the value will never come.
        case settled(Value?)
    }

    private let state = Mutex(State.waiting([]))

    init() {}

    /// Gives the value to whoever waits and will wait; a no-op once withdrawn.
    func hand(_ value: Value) { settle(value) }

    /// The value will never come: waiters get nil.
    func withdraw() { settle(nil) }

    private func settle(_ value: Value?) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value?, Never>] in
            guard case .waiting(let waiters) = state else { return [] }
            state = .settled(value)
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    /// The value, or nil once withdrawn.
    var value: Value? {
        get async {
            await withCheckedContinuation { continuation in
                let settled = state.withLock { state -> Value?? in
                    switch state {
                    case .waiting(let waiters):
                        state = .waiting(waiters + [continuation])
                        return .none
                    case .settled(let value):
                        return .some(value)
                    }
                }
                if case .some(let value) = settled { continuation.resume(returning: value) }
            }
        }
    }

    /// The value; nil once withdrawn, or when the waiting service shuts down gracefully or is cancelled first
    /// (which withdraws it).
    func valueUnlessShutdown() async -> Value? {
        await withTaskCancellationOrGracefulShutdownHandler {
            await value
        } onCancelOrGracefulShutdown: {
            self.withdraw()
        }
    }
}
