import Foundation
import Metrics
import ServiceLifecycle
import Synchronization
import TesseraCore
import TesseraStore

/// The coordinator's side of the listener: jobs and segments by state from one grouped count at each
/// scrape, and readiness (its socket bound, its store answering), over a store connection of its own.
/// The store-wide gauges are served by one coordinator of a store at a time (the one holding the store's
/// advisory lock on its probe connection), so that a dashboard's `sum()` counts each job once, and by none
/// while the store does not answer, so that nothing stale is served.
final class StoreProbe: Sendable {
    let url: String
    /// The connection, held while a probe uses it: probes may run on any thread, one at a time; and whether
    /// it holds the store-wide gauges' lock.
    let store = Mutex<(store: JobStore, servesGauges: Bool)?>(nil)

    init(databaseURL: String) {
        url = Self.withConnectTimeout(databaseURL, seconds: 3)
    }

    /// Runs `body` on the connection, made anew after a failure; nil when the store does not answer.
    func withStore<R: Sendable>(_ body: @Sendable (JobStore, inout Bool) throws -> R) -> R? {
        store.withLock { held in
            do {
                var connected = try held ?? (JobStore(url: url, reconnectTimeout: 0), false)
                defer { held = connected }
                return try body(connected.store, &connected.servesGauges)
            } catch {
                held?.store.close()
                held = nil
                return nil
            }
        }
    }

    /// The families the probe writes: `tessera_store_up`, `tessera_store_gauges`, and the jobs and segments by
    /// state when this coordinator serves them.
    func refresh() -> String {
        let counted = withStore { (store, serves) -> (jobs: [String: Int], segments: [String: Int])? in
            if !serves { serves = try store.takeGaugeLock() }
            return serves ? try store.countsByState() : nil
        }
        guard let counted else {
            return Exposition.family("tessera_store_up", "gauge", [([], 0)])
        }
        var text = Exposition.family("tessera_store_up", "gauge", [([], 1)])
            + Exposition.family("tessera_store_gauges", "gauge", [([], counted == nil ? 0 : 1)])
        if let counts = counted {
            text += Exposition.family("tessera_jobs", "gauge", JobState.allCases.map { ([("state", $0.rawValue)], Double(counts.jobs[$0.rawValue] ?? 0)) })
            text += Exposition.family("tessera_segments", "gauge",
                                      SegmentState.allCases.map { ([("state", $0.rawValue)], Double(counts.segments[$0.rawValue] ?? 0)) })
        }
        return text
    }

    var reachable: Bool { withStore { store, _ in store.ping() } ?? false }

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
        return Self(role: "coordinator", refresh: { probe.refresh() }, notReady: {
            guard coordinator.endpoint != nil else { return "the coordinator's socket is not bound yet" }
            guard probe.reachable else { return "the job store does not answer" }
            return nil
        })
    }

    /// A worker is ready while it hears from a coordinator and is not draining.
    public static func worker(_ options: ClusterWorker.Options, draining: Locked<Bool>) -> Self {
        WorkerMetrics.register()
        let silence = options.heartbeatInterval * Double(options.liveness)
        return Self(role: "worker", refresh: {
            WorkerMetrics.connected.record(WorkerMetrics.silence <= silence ? 1 : 0)
            return ""
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
