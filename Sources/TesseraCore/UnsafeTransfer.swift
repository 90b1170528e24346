/// A `sending` value on its way across a closure the compiler cannot see it cross whole: a `Thread`'s
/// `@Sendable` block, a continuation's or a `Mutex`'s closure. Made only where the value is `sending`, and
/// opened once, by its receiver.
public struct UnsafeTransfer<Value> {
    public let value: Value

    public init(_ value: sending Value) { self.value = value }
}

// Safe: made only from a `sending` value, which nothing else can reach, and opened by its one receiver.
extension UnsafeTransfer: @unchecked Sendable {}
