import Foundation
import Logging
import TesseraCore
import TesseraEngine
import TesseraStore
import ZMQKit

/// Checks, spools and records the workers' results on a thread of its own, with a store connection of
/// its own, so that the coordinator's loop only receives, leases and sends: writing a result into the
/// page cache, decoding its header and recording it cost more than the rest of a segment's handling.
///
/// This is its inbox, shared by the loop and that thread: results queue here in the order they arrived,
/// and its writer (`ResultWriter`, owned by the thread `run` starts) takes them in batches, checks,
/// spools and records them. The loop reads what came of them with `takeOutcomes()`, and calls `drain()`
/// before anything that may hand a worker's leases back, so that the results it already received are
/// recorded first.
final class ResultSpooler: Sendable {
    struct Item: Sendable {
        var worker: String
        var header: ClusterMessage.ResultHeader
        /// The result blob, where libzmq received it.
        var payload: ReceivedFrame
    }

    enum Outcome: Sendable {
        /// Recorded done: the segment's result is in the spool.
        case recorded(ClusterMessage.SegmentRef, encodeSeconds: Double, bytes: Int64, at: Double)
        /// Its SPS/PPS differ from the job's (another libx264 build): it gets no more work.
        case incompatible(worker: String)
        /// Refused (damaged or for another segment): its lease went back, the segment is pending again.
        case handedBack
        /// The spool could not take it (disk full, a write error): its lease went back without an attempt
        /// and the job waits for the fault to clear.
        case stalled(job: String, LocalFault)
    }

    struct State: Sendable {
        var items: [Item] = []
        var queuedBytes = 0
        var working = false
        var stopping = false
        var outcomes: [Outcome] = []
        /// Jobs that ended here: their late results are dropped, not spooled.
        var ended: Set<String> = []
        /// Jobs whose spool and headers the writer is to forget.
        var forgotten: [String] = []
        /// Why the spooler stopped: its store stayed unreachable.
        var failure: (any Error)?
    }

    /// What the writer takes at once: the results queued, and what to forget first.
    struct Batch: Sendable {
        var items: [Item]
        var ended: Set<String>
        var forgotten: [String]
    }

    /// Results queued at most (and bytes, whichever comes first; one is always taken): the loop waits
    /// beyond that, as it would if it spooled them itself.
    static let queueLimit = 64
    static let queueBytesLimit = 256 << 20

    /// The directory that holds every job's spool.
    let spool: URL
    let logger: Logger
    let timings: Locked<PhaseTimings>
    let state = WaitableState(State())
    /// Left when the writer's thread ends.
    let finished = DispatchGroup()
    /// Rung when outcomes are ready for the loop.
    let wake: Doorbell?

    init(spool: URL, logger: Logger, timings: Locked<PhaseTimings>, wake: Doorbell? = nil) {
        self.spool = spool
        self.logger = logger
        self.timings = timings
        self.wake = wake
    }

    /// Connects the writer's store (a session set up as the loop's: `Coordinator.prepareLoopSession`) and
    /// starts the writer's thread, which owns the writer and the store from then on.
    func run(stores: CoordinatorStoreSessions, patience: StorePatience) throws {
        let store = try stores.open(false, patience)
        try Coordinator.prepareLoopSession(store)
        let writer = ResultWriter(self, store: store)
        startThread(name: "tessera-results", group: finished) { writer.run() }
    }

    /// Queues a result; waits while the queue is full.
    func submit(_ item: Item) {
        state.wait { state -> Void? in
            guard state.failure != nil || state.items.isEmpty
                || (state.items.count < Self.queueLimit && state.queuedBytes + item.payload.count <= Self.queueBytesLimit) else { return nil }
            CoordinatorMetrics.payloadReceived.increment(by: item.payload.count)
            state.items.append(item)
            state.queuedBytes += item.payload.count
            return ()
        }
    }

    /// Waits until every result queued so far is handled; throws when the spooler stopped on an error.
    func drain() throws {
        try state.wait { state -> Result<Void, any Error>? in
            if let failure = state.failure { return .failure(failure) }
            return state.items.isEmpty && !state.working ? .success(()) : nil
        }.get()
    }

    /// What came of the results handled since the last call; throws when the spooler stopped on an error.
    func takeOutcomes() throws -> [Outcome] {
        try state.change { (state: inout State) throws(any Error) -> [Outcome] in
            if let failure = state.failure { throw failure }
            defer { state.outcomes.removeAll() }
            return state.outcomes
        }
    }

    /// The job ended, or another coordinator holds it now: the results of it already queued are handled,
    /// its later ones are dropped, and its spool file is closed; then its spool may be removed
    /// (`ResultSpool.remove`) if it ended.
    func end(_ job: String) {
        try? drain()
        state.change {
            $0.ended.insert(job)
            $0.forgotten.append(job)
        }
    }

    /// The job is this coordinator's (again): its results are spooled.
    func take(_ job: String) {
        state.change { _ = $0.ended.remove(job) }
    }

    /// Has what is queued handled, then the writer's thread stop and close its store.
    func stop() {
        state.change { $0.stopping = true }
        finished.wait()
    }

    /// For the writer: the next batch, once there is one; nil once stopping with nothing left.
    func nextBatch() -> Batch? {
        state.wait { state -> Batch?? in
            if state.items.isEmpty && state.forgotten.isEmpty { return state.stopping ? .some(nil) : nil }
            defer {
                state.forgotten.removeAll()
                state.items.removeAll(keepingCapacity: true)
                state.queuedBytes = 0
                state.working = true
            }
            return Batch(items: state.items, ended: state.ended, forgotten: state.forgotten)
        }
    }

    /// For the writer: what came of its batch, or why it stops (its store stayed unreachable).
    func handled(_ outcomes: [Outcome], failure: (any Error)?) {
        state.change {
            $0.working = false
            $0.outcomes += outcomes
            if let failure { $0.failure = failure }
        }
        if !outcomes.isEmpty || failure != nil { wake?.ring() }
    }
}
