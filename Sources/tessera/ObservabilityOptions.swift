import ArgumentParser
import Logging
import TesseraCluster

extension Observability.LogFormat: ExpressibleByArgument {}

/// `--metrics-listen` and `--log-format` of `coordinator` and `worker`.
struct ObservabilityOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Serve /metrics (Prometheus), /healthz and /readyz over HTTP on this address, e.g. 0.0.0.0:9464.",
                               valueName: "host:port"))
    var metricsListen: String?
    @Option(help: "Log lines on stderr as text, or as one JSON object per line with each metadata key its own (text, json).")
    var logFormat: Observability.LogFormat = .text

    func validate() throws {
        if let metricsListen, MetricsServer.parse(metricsListen) == nil {
            throw ValidationError("--metrics-listen takes HOST:PORT (0.0.0.0:9464, [::]:9464), not '\(metricsListen)'")
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
