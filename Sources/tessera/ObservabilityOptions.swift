import ArgumentParser
import Foundation
import Logging
import TesseraCluster

extension Observability.LogFormat: ExpressibleByArgument {}

/// `--metrics-listen` and `--log-format` of `coordinator` and `worker`; each, when not given, from its
/// environment variable (`TESSERA_METRICS_LISTEN`, `TESSERA_LOG_FORMAT`: systemd environment files, containers).
struct ObservabilityOptions: ParsableArguments {
    @Option(name: .customLong("metrics-listen"),
            help: ArgumentHelp("Serve /metrics (Prometheus), /healthz and /readyz over HTTP on this address, e.g. 0.0.0.0:9464 (or TESSERA_METRICS_LISTEN).",
                               valueName: "host:port"))
    var metricsListenOption: String?
    @Option(name: .customLong("log-format"),
            help: "Log lines on stderr as text, or as one JSON object per line with each metadata key its own: text, json (or TESSERA_LOG_FORMAT).")
    var logFormatOption: Observability.LogFormat?

    static func environment(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    var metricsListen: String? { metricsListenOption ?? Self.environment("TESSERA_METRICS_LISTEN") }
    var logFormat: Observability.LogFormat {
        logFormatOption ?? Self.environment("TESSERA_LOG_FORMAT").flatMap(Observability.LogFormat.init(rawValue:)) ?? .text
    }

    func validate() throws {
        if let metricsListen, MetricsServer.parse(metricsListen) == nil {
            throw ValidationError("--metrics-listen takes HOST:PORT (0.0.0.0:9464, [::]:9464), not '\(metricsListen)'")
        }
        if let format = Self.environment("TESSERA_LOG_FORMAT"), Observability.LogFormat(rawValue: format) == nil {
            throw ValidationError("TESSERA_LOG_FORMAT is text or json, not '\(format)'")
        }
    }

    /// Sets up logging, and metrics when they are served. Before any logger is made.
    func bootstrap() {
        Observability.bootstrapLogging(logFormat)
        if metricsListen != nil { Observability.bootstrapMetrics() }
    }

    /// The listener, when `--metrics-listen` asks for one.
    func server(_ probes: @autoclosure () -> MetricsServer.Probes, logger: Logger) -> MetricsServer? {
        guard let metricsListen, let (host, port) = MetricsServer.parse(metricsListen) else { return nil }
        return MetricsServer(host: host, port: port, probes: probes(), logger: logger)
    }
}
