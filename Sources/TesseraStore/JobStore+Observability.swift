import Metrics
import PGClient
import TesseraCore

/// What the metrics endpoint and the readiness probe ask the store.
extension JobStore {
    /// Jobs by state, and the segments of jobs that have not ended by state: two grouped counts over the
    /// state indexes, a few milliseconds with thousands of segments. Segments of ended jobs are left out,
    /// so the cost stays with the work in hand, not with the store's history.
    public func countsByState() throws(StoreError) -> (jobs: [String: Int], segments: [String: Int]) {
        let jobs = try run("counting jobs", "SELECT state, count(*) AS n FROM jobs GROUP BY state")
        let segments = try run("counting segments", """
            SELECT s.state, count(*) AS n FROM jobs j JOIN segments s ON s.job_id = j.id
            WHERE j.state NOT IN ('done', 'failed', 'canceled') GROUP BY s.state
            """)
        func counts(_ rows: PGRows) -> [String: Int] {
            Dictionary(rows.all.map { ($0.string("state"), $0.int("n") ?? 0) }, uniquingKeysWith: +)
        }
        return (counts(jobs), counts(segments))
    }

    /// Takes the lock that names the one coordinator serving the store-wide gauges, if no other session holds it;
    /// held until this connection closes. True when this session holds it.
    public func takeGaugeLock() throws(StoreError) -> Bool {
        try run("taking the gauges' lock", "SELECT pg_try_advisory_lock(\(Self.gaugeLockKey)) AS held").first?.bool("held") == true
    }

    /// The advisory lock key of the store-wide gauges ("TSRGAUGE").
    static let gaugeLockKey: Int64 = 0x5453_5247_4155_4745

    /// One round trip: true when the server answers.
    public func ping() -> Bool {
        (try? run("checking the store", "SELECT 1 AS one").first?.int("one")) == 1
    }
}

/// Each statement's time waiting on the database, as the histogram `tessera_store_seconds`.
public enum StoreMetrics {
    static let statementSeconds = Metrics.Timer(label: "tessera_store_seconds")

    /// Runs `body`, adds its wall time to `total` and records it in the histogram.
    static func time<R, E: Error>(_ total: inout Double, _ body: () throws(E) -> R) throws(E) -> R {
        let started = Stopwatch.now
        defer {
            let elapsed = Stopwatch.now - started
            total += elapsed
            statementSeconds.recordSeconds(elapsed)
        }
        return try body()
    }
}
