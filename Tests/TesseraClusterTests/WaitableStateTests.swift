import Dispatch
import Testing
import TesseraCore
@testable import TesseraCluster

/// Waiting on state another thread changes: the waiter wakes at the change that satisfies it.
struct WaitableStateTests {
    @Test func aWaiterWakesWhenAnotherThreadsChangeSatisfiesIt() {
        let state = WaitableState(0), done = DispatchGroup()
        let seen = Locked<[Int]>([])
        DispatchQueue.global().async(group: done) {
            let value = state.wait { $0 >= 3 ? $0 : nil }
            seen.withValue { $0.append(value) }
        }
        for _ in 0..<3 { state.change { $0 += 1 } }
        #expect(done.wait(timeout: .now() + 10) == .success, "woken")
        #expect(seen.current == [3])
    }

    @Test func aWaitThatTakesWakesTheOthers() {
        let state = WaitableState([Int]()), done = DispatchGroup()
        // The producer waits for room (at most one queued); the consumer takes what is queued.
        DispatchQueue.global().async(group: done) {
            for n in 1...20 {
                state.wait { queue -> Void? in
                    guard queue.isEmpty else { return nil }
                    queue.append(n)
                    return ()
                }
            }
        }
        var taken: [Int] = []
        while taken.count < 20 {
            taken += state.wait { queue -> [Int]? in
                guard !queue.isEmpty else { return nil }
                defer { queue.removeAll() }
                return queue
            }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(taken == Array(1...20))
    }
}
