import TesseraCore
import TesseraEngine
import ZMQKit

/// Whether jobs' inputs are still the ones they pinned, checked on a thread of its own: for an object in S3
/// a check is a HEAD request with retries, which must not hold the coordinator's loop (its heartbeats, leases
/// and results wait while it does). The loop asks (`check`), and reads the answers (`take`) when the
/// doorbell it shares with the job threads rings.
final class InputChecks: Sendable {
    struct Outcome: Sendable {
        var job: String
        /// Why the input is not the pinned one any more; nil: it still is.
        var error: TesseraError?
    }

    typealias Check = (job: String, check: @Sendable () throws(TesseraError) -> Void)

    private struct State {
        var queue: [Check] = []
        var pending: Set<String> = []
        var outcomes: [Outcome] = []
        var working = false
    }

    private let state = Locked(State())
    private let doorbell: Doorbell?

    init(doorbell: Doorbell?) {
        self.doorbell = doorbell
    }

    /// Queues `job`'s check; nothing when one of it is queued or under way already (its answer serves both).
    func check(_ job: String, _ check: @escaping @Sendable () throws(TesseraError) -> Void) {
        let start = state.withValue { state -> Bool in
            guard state.pending.insert(job).inserted else { return false }
            state.queue.append((job, check))
            defer { state.working = true }
            return !state.working
        }
        if start { _ = startThread(name: "tessera-input-checks") { [self] in work() } }
    }

    /// The answers since the last take.
    func take() -> [Outcome] {
        state.withValue { state in
            defer { state.outcomes.removeAll() }
            return state.outcomes
        }
    }

    /// Runs the queued checks one after another; the thread ends when none is left.
    private func work() {
        while let next = state.withValue({ state in
            if state.queue.isEmpty { state.working = false; return nil as Check? }
            return state.queue.removeFirst()
        }) {
            var error: TesseraError?
            do { try next.check() } catch let failure { error = failure }
            state.withValue {
                $0.pending.remove(next.job)
                $0.outcomes.append(Outcome(job: next.job, error: error))
            }
            doorbell?.ring()
        }
    }
}
