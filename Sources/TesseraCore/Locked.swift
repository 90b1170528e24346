import Foundation

/// A value shared between threads, every access under one lock.
public final class Locked<Value> {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    public func withValue<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    public var current: Value { withValue { $0 } }
}

// Safe: all access to `value` goes through `lock`.
extension Locked: @unchecked Sendable {}
