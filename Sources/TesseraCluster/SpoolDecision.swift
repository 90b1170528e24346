import TesseraCore
import TesseraEngine

/// What the result spooler does with one worker's result, decided from what each of its checks found,
/// without I/O: the bytes, then the job's headers, then the spool write. A result is recorded done only
/// when every step accepts it; the first step that does not says how it goes back.
enum SpoolDecision: Equatable, Sendable {
    /// This step passed.
    case accept
    /// Damaged, or for another segment: its lease goes back with `error`, and that counts as an attempt.
    case malformed(error: String)
    /// Its SPS/PPS differ from the job's (another libx264 build): its lease goes back with `error`, and its
    /// worker gets no more work.
    case incompatible(error: String)
    /// The spool could not take it (disk full, a write error): not the worker's fault, so its lease goes
    /// back without an attempt, and the job waits for `fault` to clear.
    case stall(LocalFault)

    /// The bytes: what the payload carries (`EncodedSegment.checkedHeader`) against the checksum and the
    /// segment the worker announced.
    static func payload(_ checked: Result<(header: EncodedSegment.Header, checksum: UInt64), PayloadError>,
                        announced: ClusterMessage.ResultHeader) -> SpoolDecision {
        let found: (header: EncodedSegment.Header, checksum: UInt64)
        switch checked {
        case .success(let value): found = value
        case .failure(let error): return .malformed(error: "malformed result: \(error)")
        }
        guard PayloadChecksum.hex(found.checksum) == announced.checksum else {
            return .malformed(error: "malformed result: \(PayloadError.checksumMismatch)")
        }
        guard found.header.jobID == announced.segment.jobID, found.header.index == announced.segment.index else {
            return .malformed(error: "malformed result: \(PayloadError.badHeader("wrong segment"))")
        }
        return .accept
    }

    /// The headers: the result's SPS/PPS (hex) against the job's reference. A first pass's encoder has other
    /// headers (libx264's fast first pass), and its result carries statistics only.
    static func headers(_ extradata: String, reference: String, firstPass: Bool, worker: String) -> SpoolDecision {
        guard reference == extradata || firstPass else {
            return .incompatible(error: "SPS/PPS from worker \(worker) differ from the job's (another libx264 build?)")
        }
        return .accept
    }

    /// The spool write of `bytes` bytes under `spool`: where it failed, the job waits for room or repair.
    static func spooled(_ written: Result<Int64, FileError>, spool: String, bytes: Int) -> SpoolDecision {
        guard case .failure(let error) = written else { return .accept }
        return .stall(.spool(spool, code: error.code, bytes: bytes))
    }
}
