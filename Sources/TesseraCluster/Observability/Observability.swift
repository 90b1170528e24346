import Foundation
import Logging
import Metrics
import Prometheus
import TesseraStore

/// Process-wide set-up of metrics and logs for `tessera coordinator` and `tessera worker`.
public enum Observability {
    /// The registry `/metrics` renders; swift-metrics records into it once `bootstrap` ran.
    public static let registry = PrometheusCollectorRegistry()

    /// Points swift-metrics at the Prometheus registry, with Tessera's histogram buckets. Once per process.
    public static func bootstrapMetrics() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets = [
            "tessera_segment_encode_seconds": WorkerMetrics.encodeBuckets.map { Duration.milliseconds(Int64($0 * 1000)) },
            "tessera_store_seconds": [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
                .map { Duration.microseconds(Int64($0 * 1_000_000)) },
        ]
        MetricsSystem.bootstrap(factory)
    }

    /// The log formats `--log-format` takes.
    public enum LogFormat: String, CaseIterable, Sendable {
        case text, json
    }

    /// Sends swift-log's output to stderr as text (swift-log's own format) or as one JSON object per line.
    public static func bootstrapLogging(_ format: LogFormat) {
        switch format {
        case .text: LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        case .json: LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
        }
    }

    /// The Prometheus text of everything recorded so far, with help text, then `own` (families a probe wrote),
    /// the build and the process.
    static func render(own: String = "", role: String) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16 << 10)
        registry.emit(into: &buffer)
        let text = Exposition.withHelp(String(decoding: buffer, as: UTF8.self)) + own + Exposition.buildInfo(role: role) + Exposition.process()
        return Array(text.utf8)
    }
}
