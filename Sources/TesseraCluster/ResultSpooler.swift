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
/// Results queue here in the order they arrived and are handled in batches: each is checked (checksum,
/// segment, the job's SPS/PPS) and appended to its job's `ResultSpool`, then the batch is recorded in
/// one statement (a segment the store calls done always has its result on disk). A malformed result or
/// one with other headers hands its lease back with an error. The loop reads what came of them with
/// `takeOutcomes()`, and calls `drain()` before anything that may hand a worker's leases back, so that
/// the results it already received are recorded first.
final class ResultSpooler: @unchecked Sendable {
    // `state` is guarded by `condition`; `store`, `referenceHeaders` and `spools` belong to the spooler's
    // thread.

    struct Item {
        var worker: String
        var header: ClusterMessage.ResultHeader
        /// The result blob, where libzmq received it.
        var payload: ReceivedFrame
    }

    enum Outcome {
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

    struct State {
        var items: [Item] = []
        var queuedBytes = 0
        var working = false
        var stopping = false
        var outcomes: [Outcome] = []
        /// Jobs that ended here: their late results are dropped, not spooled.
        var ended: Set<String> = []
        /// Jobs whose spool and headers the thread is to forget.
        var forgotten: [String] = []
        /// Why the spooler stopped: its store stayed unreachable.
        var failure: (any Error)?
    }

    /// Results queued at most (and bytes, whichever comes first; one is always taken): the loop waits
    /// beyond that, as it would if it spooled them itself.
    static let queueLimit = 64
    static let queueBytesLimit = 256 << 20

    /// The directory that holds every job's spool.
    let spool: URL
    let logger: Logger
    let timings: Locked<PhaseTimings>
    let store: any CoordinatorStore
    let condition = NSCondition()
    var state = State()
    let finished = DispatchGroup()
    var referenceHeaders: [String: String] = [:]
    /// Each job's spool, open for appending.
    var spools: [String: ResultSpool] = [:]
    /// Rung when outcomes are ready for the loop.
    let wake: Doorbell?

    /// Connects to the store (a session set up as the loop's: `Coordinator.prepareLoopSession`) and starts
    /// the thread.
    init(stores: CoordinatorStoreSessions, spool: URL, logger: Logger, timings: Locked<PhaseTimings>, patience: StorePatience,
         wake: Doorbell? = nil) throws {
        self.wake = wake
        store = try stores.open(false, patience)
        try Coordinator.prepareLoopSession(store)
        self.spool = spool
        self.logger = logger
        self.timings = timings
        startThread(name: "tessera-results", group: finished) { self.run() }
    }

    /// Runs `body` under the lock, then wakes every waiter (the state may have changed).
    func locked<R>(_ body: () throws -> R) rethrows -> R {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }

    /// Waits under the lock while `blocked` holds (and the spooler has not stopped on an error).
    func wait(while blocked: (State) -> Bool) {
        while state.failure == nil && blocked(state) { condition.wait() }
    }

    /// Queues a result; waits while the queue is full.
    func submit(_ item: Item) {
        locked {
            wait { !$0.items.isEmpty && ($0.items.count >= Self.queueLimit || $0.queuedBytes + item.payload.count > Self.queueBytesLimit) }
            CoordinatorMetrics.payloadReceived.increment(by: item.payload.count)
            state.items.append(item)
            state.queuedBytes += item.payload.count
        }
    }

    /// Waits until every result queued so far is handled; throws when the spooler stopped on an error.
    func drain() throws {
        try locked {
            wait { !$0.items.isEmpty || $0.working }
            if let failure = state.failure { throw failure }
        }
    }

    /// What came of the results handled since the last call; throws when the spooler stopped on an error.
    func takeOutcomes() throws -> [Outcome] {
        try locked {
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
        locked {
            state.ended.insert(job)
            state.forgotten.append(job)
        }
    }

    /// The job is this coordinator's (again): its results are spooled.
    func take(_ job: String) {
        locked { _ = state.ended.remove(job) }
    }

    /// Handles what is queued, then stops and closes its store.
    func stop() {
        locked { state.stopping = true }
        finished.wait()
    }

    func run() {
        defer { store.close() }
        while true {
            let taken = locked { () -> (batch: [Item], ended: Set<String>)? in
                while state.items.isEmpty && state.forgotten.isEmpty && !state.stopping { condition.wait() }
                if state.items.isEmpty && state.forgotten.isEmpty { return nil }
                for job in state.forgotten {
                    referenceHeaders[job] = nil
                    spools[job] = nil
                }
                defer {
                    state.forgotten.removeAll()
                    state.items.removeAll(keepingCapacity: true)
                    state.queuedBytes = 0
                    state.working = true
                }
                return (state.items, state.ended)
            }
            guard let (batch, ended) = taken else { return }

            let cpu = Stopwatch.threadCPU, waited = store.queryTime
            var outcomes: [Outcome] = []
            var failure: (any Error)?
            do {
                outcomes = try handle(batch.filter { !ended.contains($0.header.segment.jobID) })
            } catch let error as StoreError where error.isConnectionFailure {
                failure = error
            } catch {
                logger.warning("recording results failed", metadata: ["error": "\(error)"])
            }
            let database = store.queryTime - waited, used = Stopwatch.threadCPU - cpu
            timings.withValue {
                $0.results += used
                $0.spoolerCPU += used
                $0.database += database
                $0.spoolerDatabase += database
            }

            locked {
                state.working = false
                state.outcomes += outcomes
                if let failure { state.failure = failure }
            }
            if !outcomes.isEmpty || failure != nil { wake?.ring() }
            if failure != nil { return }
        }
    }

    /// Checks and spools each result and records those that pass in one statement.
    func handle(_ batch: [Item]) throws -> [Outcome] {
        var outcomes: [Outcome] = []
        var spooled: [JobStore.Completion] = []
        for item in batch {
            do {
                if let ready = try check(item, &outcomes) { spooled.append(ready) }
            } catch let error as StoreError {
                throw error
            } catch {
                logger.warning("could not spool a result", metadata: ["job.id": "\(item.header.segment.jobID)",
                                                                       "segment.index": "\(item.header.segment.index)", "error": "\(error)"])
            }
        }
        guard !spooled.isEmpty else { return outcomes }
        // Not recorded when this throws: the segments stay leased and return when their leases do.
        let counted = try store.complete(spooled)
        let now = Stopwatch.now
        for (position, c) in spooled.enumerated() {
            if counted.contains(position) {
                CoordinatorMetrics.segmentsCompleted.increment()
                outcomes.append(.recorded(.init(jobID: c.jobID, index: c.index), encodeSeconds: c.result.encodeSeconds,
                                          bytes: c.result.sizeBytes, at: now))
            } else {
                // No longer this worker's lease: a late duplicate (its bytes stay unused in the spool file).
                logger.info("ignored a late result", metadata: ["worker.id": "\(c.worker)", "job.id": "\(c.jobID)", "segment.index": "\(c.index)"])
            }
        }
        return outcomes
    }

    /// Checks one result and appends it to its job's spool file; nil when it was refused (its lease
    /// handed back with the reason).
    func check(_ item: Item, _ outcomes: inout [Outcome]) throws -> JobStore.Completion? {
        let ref = item.header.segment, worker = item.worker, payload = item.payload
        let checksum: String
        let encoded: EncodedSegment.Header
        do {
            // One pass over the bytes (the checksum); the packets are framed right but not copied.
            let checked = try payload.withUnsafeBytes { (bytes) throws(PayloadError) in try EncodedSegment.checkedHeader(bytes) }
            checksum = PayloadChecksum.hex(checked.checksum)
            encoded = checked.header
            guard checksum == item.header.checksum else { throw PayloadError.checksumMismatch }
            guard encoded.jobID == ref.jobID, encoded.index == ref.index else { throw PayloadError.badHeader("wrong segment") }
        } catch {
            try store.release(ref.jobID, ref.index, worker: worker, error: "malformed result: \(error)")
            CoordinatorMetrics.resultRefused(.malformed)
            outcomes.append(.handedBack)
            return nil
        }
        let hex = encoded.extradata.hexString
        let reference: String
        if let known = referenceHeaders[ref.jobID] {
            reference = known
        } else {
            reference = try store.referenceExtradata(ref.jobID, proposing: hex)
            referenceHeaders[ref.jobID] = reference
        }
        // A first pass's encoder has other headers (libx264's fast first pass); its result carries statistics only.
        guard reference == hex || encoded.firstPass != nil else {
            try store.release(ref.jobID, ref.index, worker: worker, error: "SPS/PPS from worker \(worker) differ from the job's (another libx264 build?)")
            logger.warning("refused a result with other headers", metadata: ["worker.id": "\(worker)", "job.id": "\(ref.jobID)"])
            outcomes.append(.incompatible(worker: worker))
            CoordinatorMetrics.resultRefused(.otherHeaders)
            return nil
        }
        let jobSpool: ResultSpool, offset: Int64
        do {
            if let open = spools[ref.jobID] {
                jobSpool = open
            } else {
                jobSpool = try ResultSpool(root: spool, job: ref.jobID)
                spools[ref.jobID] = jobSpool
            }
            offset = try payload.withUnsafeBytes { (bytes) throws(FileError) in try jobSpool.append(bytes) }
        } catch {
            // Not the worker's fault: the lease goes back without an attempt, the job waits for the spool.
            try store.release(ref.jobID, ref.index, worker: worker, error: nil)
            outcomes.append(.stalled(job: ref.jobID, .spool(spool.path, code: error.code, bytes: payload.count)))
            return nil
        }
        let result = SegmentResult(path: jobSpool.path, offset: offset, checksum: checksum, sizeBytes: Int64(payload.count),
                                   encodeSeconds: encoded.encodeSeconds)
        return JobStore.Completion(jobID: ref.jobID, index: ref.index, worker: worker, token: item.header.token, result: result)
    }
}
