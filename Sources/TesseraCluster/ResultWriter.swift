import Foundation
import Logging
import TesseraCore
import TesseraEngine
import TesseraStore
import ZMQKit

/// The result spooler's writer: it takes the results its inbox (`ResultSpooler`) queued, in batches, and
/// checks each (checksum, segment, the job's SPS/PPS: `SpoolDecision`), appends it to its job's
/// `ResultSpool`, then records the batch in one statement (a segment the store calls done always has its
/// result on disk). A refused result hands its lease back. Made for the spooler's thread, which owns it
/// and its store connection alone.
final class ResultWriter {
    typealias Item = ResultSpooler.Item
    typealias Outcome = ResultSpooler.Outcome

    let inbox: ResultSpooler
    let store: any CoordinatorStore
    /// Each job's SPS/PPS, as the store keeps them.
    var referenceHeaders: [String: String] = [:]
    /// Each job's spool, open for appending.
    var spools: [String: ResultSpool] = [:]

    var logger: Logger { inbox.logger }

    init(_ inbox: ResultSpooler, store: any CoordinatorStore) {
        self.inbox = inbox
        self.store = store
    }

    /// Handles batches until the inbox stops (what was queued is handled first) or the store stays
    /// unreachable; then closes the store.
    func run() {
        defer { store.close() }
        while let batch = inbox.nextBatch() {
            for job in batch.forgotten {
                referenceHeaders[job] = nil
                spools[job] = nil
            }
            let cpu = Stopwatch.threadCPU, waited = store.queryTime
            var outcomes: [Outcome] = []
            var failure: (any Error)?
            do {
                outcomes = try handle(batch.items.filter { !batch.ended.contains($0.header.segment.jobID) })
            } catch let error as StoreError where error.isConnectionFailure {
                failure = error
            } catch {
                logger.warning("recording results failed", metadata: ["error": "\(error)"])
            }
            let database = store.queryTime - waited, used = Stopwatch.threadCPU - cpu
            inbox.timings.withValue {
                $0.results += used
                $0.spoolerCPU += used
                $0.database += database
                $0.spoolerDatabase += database
            }
            inbox.handled(outcomes, failure: failure)
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
    /// handed back, with the reason when it was the worker's fault).
    func check(_ item: Item, _ outcomes: inout [Outcome]) throws -> JobStore.Completion? {
        let ref = item.header.segment, payload = item.payload
        // One pass over the bytes (the checksum); the packets are framed right but not copied.
        let checked = Result { () throws(PayloadError) in
            try payload.withUnsafeBytes { (bytes) throws(PayloadError) in try EncodedSegment.checkedHeader(bytes) }
        }
        let decision = SpoolDecision.payload(checked, announced: item.header)
        guard decision == .accept, case .success(let found) = checked else {
            try refuse(item, decision, &outcomes)
            return nil
        }

        let hex = found.header.extradata.hexString
        let reference: String
        if let known = referenceHeaders[ref.jobID] {
            reference = known
        } else {
            reference = try store.referenceExtradata(ref.jobID, proposing: hex)
            referenceHeaders[ref.jobID] = reference
        }
        let headers = SpoolDecision.headers(hex, reference: reference, firstPass: found.header.firstPass != nil, worker: item.worker)
        guard headers == .accept else {
            try refuse(item, headers, &outcomes)
            return nil
        }

        let written = Result { () throws(FileError) -> (ResultSpool, Int64) in
            let jobSpool: ResultSpool
            if let open = spools[ref.jobID] {
                jobSpool = open
            } else {
                jobSpool = try ResultSpool(root: inbox.spool, job: ref.jobID)
                spools[ref.jobID] = jobSpool
            }
            return (jobSpool, try payload.withUnsafeBytes { (bytes) throws(FileError) in try jobSpool.append(bytes) })
        }
        let spooled = SpoolDecision.spooled(written.map(\.1), spool: inbox.spool.path, bytes: payload.count)
        guard spooled == .accept, case .success(let (jobSpool, offset)) = written else {
            try refuse(item, spooled, &outcomes)
            return nil
        }

        let result = SegmentResult(path: jobSpool.path, offset: offset, checksum: PayloadChecksum.hex(found.checksum),
                                   sizeBytes: Int64(payload.count), encodeSeconds: found.header.encodeSeconds)
        return JobStore.Completion(jobID: ref.jobID, index: ref.index, worker: item.worker, token: item.header.token, result: result)
    }

    /// Carries out a decision other than `accept`: the result's lease goes back (with the error when the
    /// worker is at fault), and the loop hears of it.
    func refuse(_ item: Item, _ decision: SpoolDecision, _ outcomes: inout [Outcome]) throws {
        let ref = item.header.segment, worker = item.worker
        switch decision {
        case .accept:
            break
        case .malformed(let error):
            try store.release(ref.jobID, ref.index, worker: worker, error: error)
            CoordinatorMetrics.resultRefused(.malformed)
            outcomes.append(.handedBack)
        case .incompatible(let error):
            try store.release(ref.jobID, ref.index, worker: worker, error: error)
            logger.warning("refused a result with other headers", metadata: ["worker.id": "\(worker)", "job.id": "\(ref.jobID)"])
            outcomes.append(.incompatible(worker: worker))
            CoordinatorMetrics.resultRefused(.otherHeaders)
        case .stall(let fault):
            try store.release(ref.jobID, ref.index, worker: worker, error: nil)
            outcomes.append(.stalled(job: ref.jobID, fault))
        }
    }
}
