import Foundation
import Testing
import TesseraCore
import TesseraEngine
@testable import TesseraCluster

/// The result spooler's accept, refuse and stall choices, from what its checks found: no socket, no store.
struct SpoolDecisionTests {
    static let result = EncodedSegment(jobID: "job", index: 4, timeBase: Rational(1, 12800), extradata: [1, 100, 0, 31],
                                       frameCount: 1, decodedFrames: 1, encodeSeconds: 0.5,
                                       packets: [MediaPacket(pts: 512, dts: 0, duration: 512, flags: 1, data: [7, 7, 7])])

    /// What the spooler reads of `bytes`, as it does from a received frame.
    static func checked(_ bytes: [UInt8]) -> Result<(header: EncodedSegment.Header, checksum: UInt64), PayloadError> {
        Result { () throws(PayloadError) in try EncodedSegment.checkedHeader(bytes) }
    }

    static func announced(index: Int = 4, checksum: String) -> ClusterMessage.ResultHeader {
        ClusterMessage.ResultHeader(segment: .init(jobID: "job", index: index), attempt: 1, token: "t", checksum: checksum)
    }

    @Test func anIntactResultForItsSegmentPasses() {
        let (bytes, checksum) = Self.result.serializedWithChecksum()
        #expect(SpoolDecision.payload(Self.checked(bytes), announced: Self.announced(checksum: checksum)) == .accept)
    }

    @Test func damagedBytesAreMalformed() {
        var (bytes, checksum) = Self.result.serializedWithChecksum()
        bytes[bytes.count / 2] ^= 0xFF
        let decision = SpoolDecision.payload(Self.checked(bytes), announced: Self.announced(checksum: checksum))
        #expect(decision == .malformed(error: "malformed result: \(PayloadError.checksumMismatch)"))
        let truncated = SpoolDecision.payload(Self.checked(Array(bytes.prefix(8))), announced: Self.announced(checksum: checksum))
        #expect(truncated == .malformed(error: "malformed result: \(PayloadError.truncated)"))
    }

    @Test func anotherChecksumThanAnnouncedIsMalformed() {
        let (bytes, _) = Self.result.serializedWithChecksum()
        let decision = SpoolDecision.payload(Self.checked(bytes), announced: Self.announced(checksum: "0000000000000000"))
        #expect(decision == .malformed(error: "malformed result: \(PayloadError.checksumMismatch)"))
    }

    @Test func anotherSegmentsResultIsMalformed() {
        let (bytes, checksum) = Self.result.serializedWithChecksum()
        let decision = SpoolDecision.payload(Self.checked(bytes), announced: Self.announced(index: 5, checksum: checksum))
        #expect(decision == .malformed(error: "malformed result: \(PayloadError.badHeader("wrong segment"))"))
    }

    @Test func otherHeadersAreIncompatibleUnlessAFirstPass() {
        #expect(SpoolDecision.headers("0164001f", reference: "0164001f", firstPass: false, worker: "w1") == .accept)
        #expect(SpoolDecision.headers("0164001e", reference: "0164001f", firstPass: true, worker: "w1") == .accept,
                "a fast first pass has headers of its own")
        #expect(SpoolDecision.headers("0164001e", reference: "0164001f", firstPass: false, worker: "w1")
                == .incompatible(error: "SPS/PPS from worker w1 differ from the job's (another libx264 build?)"))
    }

    @Test func aFailedSpoolWriteStallsTheJob() {
        #expect(SpoolDecision.spooled(.success(4096), spool: "/spool", bytes: 1000) == .accept)
        let full = SpoolDecision.spooled(.failure(FileError(call: "pwrite", code: ENOSPC)), spool: "/spool", bytes: 3 << 20)
        #expect(full == .stall(.spool("/spool", code: ENOSPC, bytes: 3 << 20)))
        guard case .stall(let fault) = full else { return }
        #expect(fault.neededBytes == 6 << 20, "room for this result and the next")
        let broken = SpoolDecision.spooled(.failure(FileError(call: "open", code: EACCES)), spool: "/spool", bytes: 1000)
        guard case .stall(let other) = broken else {
            Issue.record("a write error stalls too")
            return
        }
        #expect(other.neededBytes == 0, "not a shortage: it waits for a test write")
    }
}
