import Foundation
import PGClient
import TesseraCore
@testable import TesseraStore

/// A real PostgreSQL for the tests: `TESSERA_TEST_DATABASE_URL` (a server whose user may create
/// databases), else an embedded server in a temporary directory, started once per test run and
/// stopped when the process exits. Every test gets its own fresh database.
enum TestDatabase {
    nonisolated(unsafe) static var stopAtExit: EmbeddedPostgres?

    static let server: Result<String, StoreError> = {
        if let url = ProcessInfo.processInfo.environment["TESSERA_TEST_DATABASE_URL"] { return .success(url) }
        let dir = URL(fileURLWithPath: "/tmp/tessera-test-pg-\(ProcessInfo.processInfo.processIdentifier)")
        let server = EmbeddedPostgres(directory: dir)
        do throws(StoreError) {
            try server.start()
        } catch {
            return .failure(error)
        }
        stopAtExit = server
        atexit {
            if let server = TestDatabase.stopAtExit {
                try? server.stop()
                try? FileManager.default.removeItem(at: server.directory)
            }
        }
        return .success(server.url(database: "postgres"))
    }()

    /// A new empty database; returns its URL.
    static func fresh() throws -> String {
        let admin = try PGConnection(conninfo: try server.get(), reconnectTimeout: 0)
        defer { admin.close() }
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        try admin.query("CREATE DATABASE \(name)")
        let base = try server.get()
        if base.contains("dbname=postgres") { return base.replacingOccurrences(of: "dbname=postgres", with: "dbname=\(name)") }
        return base + (base.contains("?") ? "&" : "?") + "dbname=\(name)"
    }

    /// A migrated store on a fresh database.
    static func store() throws -> (JobStore, String) {
        let url = try fresh()
        return (try JobStore(url: url, migrate: true, reconnectTimeout: 5), url)
    }
}

extension JobStore {
    /// Records one finished segment under `lease`'s token (or `token`). False (and nothing changes) when
    /// the worker no longer holds the lease, or the token is another's: a late duplicate or a forgery.
    func complete(_ lease: Lease, worker: String, token: String? = nil, result: SegmentResult) throws(StoreError) -> Bool {
        try complete([Completion(jobID: lease.jobID, index: lease.index, worker: worker, token: token ?? lease.token, result: result)]).contains(0)
    }

    /// A job already planned into `count` segments of 10 frames each (queued → planning → encoding).
    func plannedJob(segments count: Int, coordinator: String = "test", priority: Int = JobStore.defaultPriority,
                    outputs: Int = 1) throws -> String {
        let id = try submit(input: "/in.mp4", output: "/out.mp4", spec: JobSpec(), priority: priority)
        guard let claimed = try claimQueuedJob(coordinator: coordinator), claimed.id == id else { throw StoreError("claim failed") }
        var plan: [PlannedSegment] = []
        for k in 0..<count {
            let first = k * 10
            plan.append(PlannedSegment(index: k, startPTS: Int64(first), endPTS: Int64(first + 10), firstPacket: first,
                                       lastPacket: first + 9, frameCount: 10, preRollPackets: 0, entry: .idr))
        }
        try addSegments(id, plan, outputs: outputs)
        return id
    }
}
