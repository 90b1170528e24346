import Synchronization

/// A value shared between threads (or between services and their threads), every access under one lock.
/// A class, so that the values holding it stay copyable.
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) { mutex = Mutex(value) }

    public func withValue<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        try mutex.withLock { (value: inout Value) throws(E) -> R in try body(&value) }
    }

    public var current: Value { mutex.withLock { $0 } }
}
