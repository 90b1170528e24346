import TesseraCore
import ZMQKit

/// What two encodes of a segment are compared by: the result as the stitch uses it (packets with their timing and
/// flags, the encoder's headers, the first pass's statistics), serialized with the encode's duration set to zero,
/// the one field that differs between honest workers.
enum AuditContent {
    /// The content of a result payload with its encode seconds; nil when it does not parse (the result spooler
    /// refuses it then).
    static func of(_ payload: ReceivedFrame) -> (content: [UInt8], encodeSeconds: Double)? {
        let parsed = Result { () throws(PayloadError) in
            try payload.withUnsafeBytes { (bytes) throws(PayloadError) in try EncodedSegment(serializedBytes: bytes) }
        }
        guard case .success(var segment) = parsed else { return nil }
        let seconds = segment.header.encodeSeconds
        segment.header.encodeSeconds = 0
        return (segment.serialized(), seconds)
    }
}
