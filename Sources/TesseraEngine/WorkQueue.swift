import Foundation
import TesseraCore

/// A bounded blocking queue between the segment reader and the encoder threads (back-pressure keeps
/// at most `capacity` payloads in memory).
final class WorkQueue<Element: Sendable> {
    private let condition = NSCondition()
    private var items: [Element] = []
    private var closed = false
    private let capacity: Int

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Blocks while full; false when the queue was closed.
    func push(_ item: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while items.count >= capacity && !closed { condition.wait() }
        guard !closed else { return false }
        items.append(item)
        condition.broadcast()
        return true
    }

    /// Blocks while empty; nil once closed and drained.
    func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty && !closed { condition.wait() }
        guard !items.isEmpty else { return nil }
        let item = items.removeFirst()
        condition.broadcast()
        return item
    }

    /// No more pushes; poppers drain what is left.
    func close(discarding: Bool = false) {
        condition.lock()
        closed = true
        if discarding { items.removeAll() }
        condition.broadcast()
        condition.unlock()
    }
}

// All state is guarded by `condition`.
extension WorkQueue: @unchecked Sendable {}

/// Runs `body` on a dedicated thread (blocking C work stays off Swift's cooperative pool), with a stack
/// large enough for libx264 and the decoders; `done` is left when it returns. `body` is the new thread's
/// alone (`sending`), so what it captures (a store connection, a writer) needs no box to move there.
@discardableResult
public func startThread(name: String, group done: DispatchGroup = DispatchGroup(), _ body: sending @escaping () -> Void) -> DispatchGroup {
    done.enter()
    let sent = UnsafeTransfer(body)
    let thread = Thread {
        sent.value()
        done.leave()
    }
    thread.name = name
    thread.stackSize = 16 << 20
    thread.start()
    return done
}
