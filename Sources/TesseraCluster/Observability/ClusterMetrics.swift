import Foundation
import Metrics
import TesseraCore

// The metrics a coordinator and a worker record, through swift-metrics. Each is made on first use, so
// `Observability.bootstrap` must run before a coordinator or worker starts; without it they cost nothing.
// The calls in the coordinator's and the worker's code are one line each, into these types.

/// A coordinator's counters; the gauges of jobs and segments by state are read from the store at
/// scrape time (`StoreGauges`).
enum CoordinatorMetrics {
    static let workersConnected = Gauge(label: "tessera_workers_connected")
    static let segmentsCompleted = Counter(label: "tessera_segments_completed_total")
    static let leasesExpired = Counter(label: "tessera_leases_expired_total")
    static let workersQuarantined = Counter(label: "tessera_workers_quarantined_total")
    /// Audits closed (two or three encodes of a segment by different keys compared), those that found encodes
    /// differing, and the seconds the audit encodes took.
    static let audits = Counter(label: "tessera_audits_total")
    static let auditMismatches = Counter(label: "tessera_audit_mismatches_total")
    static let auditEncodeSeconds = FloatingPointCounter(label: "tessera_audit_encode_seconds_total")
    static let payloadSent = Counter(label: "tessera_payload_bytes_total", dimensions: [("direction", "sent")])
    static let payloadReceived = Counter(label: "tessera_payload_bytes_total", dimensions: [("direction", "received")])
    /// Source packet bytes inside the task payloads sent: none for tasks whose workers read their own from S3.
    static let sourceSent = Counter(label: "tessera_source_bytes_sent_total")
    private static let workersLast = Locked(-1)

    /// Why a result was refused: the `reason` label of `tessera_results_refused_total`.
    enum RefusedResult: String, CaseIterable {
        /// Not from a connected worker.
        case unknownWorker = "unknown_worker"
        /// The worker holds no lease on the segment (a duplicate or a late result).
        case noLease = "no_lease"
        /// Its lease token is not the lease's.
        case wrongToken = "wrong_token"
        /// Its CURVE key is not (or no longer) authorized.
        case unauthorizedKey = "unauthorized_key"
        /// Bad framing, checksum or segment header.
        case malformed
        /// SPS/PPS differ from the job's (another libx264 build).
        case otherHeaders = "other_headers"
    }

    private static let refusedCounters = Dictionary(uniqueKeysWithValues: RefusedResult.allCases.map {
        ($0, Counter(label: "tessera_results_refused_total", dimensions: [("reason", $0.rawValue)]))
    })

    static func resultRefused(_ reason: RefusedResult) { refusedCounters[reason]?.increment() }

    static func resultRefused(_ refusal: CoordinatorStateMachine.Refusal) {
        switch refusal {
        case .unknownWorker: resultRefused(RefusedResult.unknownWorker)
        case .noTask: resultRefused(RefusedResult.noLease)
        case .wrongToken: resultRefused(RefusedResult.wrongToken)
        case .unauthorizedKey, .keyChanged: resultRefused(RefusedResult.unauthorizedKey)
        // A cancel is no refusal: a result that crossed it is dropped without a count.
        case .jobEnded: break
        }
    }

    /// The loop's count of connected workers, recorded when it changes.
    static func workers(_ count: Int) {
        guard workersLast.withValue({ last in defer { last = count }; return last != count }) else { return }
        workersConnected.record(count)
    }

    /// Every series starts at 0, so dashboards and `rate()` see it before its first event.
    static func register() {
        _ = (segmentsCompleted, leasesExpired, workersQuarantined, payloadSent, payloadReceived, sourceSent, refusedCounters)
        workers(0)
    }
}

/// A worker's metrics, and what its readiness is judged on.
public enum WorkerMetrics {
    /// Buckets of `tessera_segment_encode_seconds`, up to 30 minutes.
    static let encodeBuckets: [Double] = [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800]
    static let encodeSeconds = Metrics.Timer(label: "tessera_segment_encode_seconds")
    static let framesEncoded = Counter(label: "tessera_encoded_frames_total")
    static let segmentFailures = Counter(label: "tessera_segment_failures_total")
    static let busy = Gauge(label: "tessera_worker_busy")
    static let connected = Gauge(label: "tessera_worker_connected")
    private static let state = Locked((encoding: 0, lastHeard: -Double.infinity))

    /// An encode started on its own thread.
    static func encodeStarted() {
        busy.record(state.withValue { $0.encoding += 1; return $0.encoding })
    }

    /// That encode ended with `message`, a result or a failure (nil: canceled).
    static func encodeEnded(_ message: ClusterMessage?) {
        if case .failure = message { segmentFailures.increment() }
        busy.record(state.withValue { $0.encoding -= 1; return $0.encoding })
    }

    /// A segment was encoded: its encoder's time and its frames.
    static func encoded(_ header: EncodedSegment.Header) {
        encodeSeconds.recordSeconds(header.encodeSeconds)
        framesEncoded.increment(by: Int64(header.frameCount))
    }

    /// A message came from the coordinator.
    static func heardFromCoordinator() {
        let now = Stopwatch.now
        state.withValue { $0.lastHeard = now }
    }

    /// Seconds since the coordinator was last heard from.
    static var silence: Double { Stopwatch.now - state.current.lastHeard }

    static func register() {
        _ = (encodeSeconds, framesEncoded, segmentFailures)
        busy.record(0)
        connected.record(0)
    }
}
