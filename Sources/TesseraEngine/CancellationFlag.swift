import TesseraCore

/// Set once (Ctrl-C, SIGTERM, a cancel request); every stage of a job checks it and stops promptly.
public final class CancellationFlag: Sendable {
    private struct State {
        var canceled = false
        var nextObserver = 0
        var observers: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Locked(State())

    public init() {}

    public func cancel() {
        let observers = state.withValue { state -> [@Sendable () -> Void] in
            guard !state.canceled else { return [] }
            state.canceled = true
            defer { state.observers.removeAll() }
            return Array(state.observers.values)
        }
        for observer in observers { observer() }
    }

    public var isCancelled: Bool { state.current.canceled }

    /// Runs `action` when the flag is set (at once if it is): a thread waiting on a socket or a pipe is
    /// woken rather than finding out at its next timeout. Returns what `stopObserving` takes.
    @discardableResult
    public func onCancel(_ action: @escaping @Sendable () -> Void) -> Int {
        let (id, now) = state.withValue { state -> (Int, Bool) in
            state.nextObserver += 1
            if !state.canceled { state.observers[state.nextObserver] = action }
            return (state.nextObserver, state.canceled)
        }
        if now { action() }
        return id
    }

    public func stopObserving(_ id: Int) {
        state.withValue { _ = $0.observers.removeValue(forKey: id) }
    }

    func check() throws(TesseraError) {
        if isCancelled { throw TesseraError.canceled }
    }
}

extension TesseraError {
    public static let canceled = TesseraError(.canceled, "", "canceled")
}
