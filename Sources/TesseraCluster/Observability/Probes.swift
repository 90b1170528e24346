import Foundation
import Metrics
import ServiceLifecycle
import Synchronization
import TesseraCore
import TesseraStore

/// The coordinator's side of the listener: jobs and segments by state from one grouped count at each
/// scrape, and readiness (its socket bound, its store answering), over a store connection of its own.
final class StoreProbe: Sendable {
    let url: String
    /// The connection, held while a probe uses it: probes may run on any thread, one at a time.
    let store = Mutex<JobStore?>(nil)
    let jobs = Dictionary(uniqueKeysWithValues: JobState.allCases.map { ($0.rawValue, Gauge(label: "tessera_jobs", dimensions: [("state", $0.rawValue)])) })
    let segments = Dictionary(uniqueKeysWithValues: SegmentState.allCases.map {
        ($0.rawValue, Gauge(label: "tessera_segments", dimensions: [("state", $0.rawValue)]))
    })
    let storeUp = Gauge(label: "tessera_store_up")

    init(databaseURL: String) {
        url = Self.withConnectTimeout(databaseURL, seconds: 3)
    }

    /// Runs `body` on the connection, made anew after a failure; nil when the store does not answer.
    func withStore<R: Sendable>(_ body: @Sendable (JobStore) throws -> R) -> R? {
        store.withLock { store in
            do {
                let connected = try store ?? JobStore(url: url, reconnectTimeout: 0)
                store = connected
                return try body(connected)
            } catch {
                store?.close()
                store = nil
                return nil
            }
        }
    }

    func refresh() {
        guard let counts = withStore({ try $0.countsByState() }) else {
            storeUp.record(0)
            return
        }
        storeUp.record(1)
        for (state, gauge) in jobs { gauge.record(counts.jobs[state] ?? 0) }
        for (state, gauge) in segments { gauge.record(counts.segments[state] ?? 0) }
    }

    var reachable: Bool { withStore { $0.ping() } ?? false }

    /// A probe must not hang on an unreachable host: libpq's `connect_timeout`, unless the URL sets one.
    static func withConnectTimeout(_ url: String, seconds: Int) -> String {
        guard !url.contains("connect_timeout") else { return url }
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            return url + (url.contains("?") ? "&" : "?") + "connect_timeout=\(seconds)"
        }
        return url + " connect_timeout=\(seconds)"
    }
}

extension MetricsServer.Probes {
    /// A coordinator is ready once its socket is bound and while its store answers.
    public static func coordinator(_ coordinator: Coordinator) -> Self {
        CoordinatorMetrics.register()
        let probe = StoreProbe(databaseURL: coordinator.options.databaseURL)
        return Self(refresh: { probe.refresh() }, notReady: {
            guard coordinator.endpoint != nil else { return "the coordinator's socket is not bound yet" }
            guard probe.reachable else { return "the job store does not answer" }
            return nil
        })
    }

    /// A worker is ready while it hears from a coordinator and is not draining.
    public static func worker(_ options: ClusterWorker.Options, draining: Locked<Bool>) -> Self {
        WorkerMetrics.register()
        let silence = options.heartbeatInterval * Double(options.liveness)
        return Self(refresh: {
            WorkerMetrics.connected.record(WorkerMetrics.silence <= silence ? 1 : 0)
        }, notReady: {
            if draining.current { return "draining: handing its work back before it stops" }
            guard WorkerMetrics.silence <= silence else { return "not connected to a coordinator" }
            return nil
        })
    }
}

/// A service run by another, which notes when graceful shutdown begins: a worker is then draining, and
/// its `/readyz` says so while it hands its work back.
public struct DrainNotingService: Service {
    let inner: any Service
    public let draining = Locked(false)

    public init(_ inner: any Service) {
        self.inner = inner
    }

    public func run() async throws {
        let draining = self.draining
        try await withGracefulShutdownHandler {
            try await inner.run()
        } onGracefulShutdown: {
            draining.withValue { $0 = true }
        }
    }
}
