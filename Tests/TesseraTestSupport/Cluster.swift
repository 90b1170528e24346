import Foundation
import TesseraStore

/// A whole cluster on loopback: an embedded PostgreSQL, a `tessera coordinator` process and
/// `tessera worker` processes, driven through the CLI as users do.
package final class Cluster {
    package let binary = Tool.tesseraBinary
    package let directory: URL
    package let port: Int
    package var coordinator: Process?
    package var workers: [String: Process] = [:]
    /// With CURVE keys (`secure()`): the coordinator's key pair and its authorized keys file; nil: --insecure.
    package var keys: (coordinator: String, authorized: String)?

    package init() throws {
        directory = Fixtures.directory.appendingPathComponent("cluster-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = Cluster.freePort()
        let started = try Tool.run(binary, ["db", "start"] + db)
        guard started.status == 0 else { throw ToolError("db start: \(started.stderr)") }
    }

    package var db: [String] { ["--data-dir", directory.appendingPathComponent("db").path] }
    package var endpoint: String { "tcp://127.0.0.1:\(port)" }

    /// A free port below the kernel's ephemeral range (32768 and up), so that no outgoing connection of a
    /// test running beside this one takes it while a coordinator restarts on it.
    package static func freePort() -> Int {
        while true {
            let port = Int.random(in: 20_000..<32_000)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            if bound == 0 { return port }
        }
    }

    /// `environment`: the process's whole environment (nil: this one's).
    package func spawn(_ arguments: [String], log: String, environment: [String: String]? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let path = directory.appendingPathComponent(log).path
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Audits are off unless `extra` sets `--audit`: they add encodes the plan does not count, which tests of the
    /// plan's work would see (`AuditClusterTests` turns them on per job).
    /// Seconds between heartbeats, and heartbeats missed before a peer is taken for silent: losses are found in
    /// seconds, and a whole suite on two cores, which has starved both workers of a cluster past three, does not.
    package static let heartbeat = "1", liveness = "5"

    package func startCoordinator(_ extra: [String] = [], environment: [String: String]? = nil) throws {
        let security = keys.map { ["--key", $0.coordinator + ".key", "--authorized-keys", $0.authorized] } ?? ["--insecure"]
        let audit = extra.contains("--audit") ? [] : ["--audit", "0"]
        coordinator = try spawn(["coordinator", "--bind", endpoint, "--heartbeat", Self.heartbeat, "--liveness", Self.liveness] + security + audit + extra + db, log: "coordinator.log",
                                environment: environment)
    }

    /// Starts a worker; in a secure cluster with the key pair `key` (made by `keygen`; nil: no key at all).
    package func startWorker(_ id: String, key: String? = nil, _ extra: [String] = [], environment: [String: String]? = nil) throws {
        var security = ["--insecure"]
        if let keys, let key { security = ["--key", key + ".key", "--coordinator-key", keys.coordinator + ".pub"] }
        workers[id] = try spawn(["worker", "--connect", endpoint, "--id", id, "--heartbeat", Self.heartbeat, "--liveness", Self.liveness] + security + extra, log: "\(id).log",
                                environment: environment)
    }

    /// Makes the cluster a secure one: a coordinator key pair and an empty authorized keys file.
    package func secure() throws {
        let coordinator = try keygen("coordinator")
        let authorized = directory.appendingPathComponent("authorized_workers").path
        _ = FileManager.default.createFile(atPath: authorized, contents: Data("# workers\n".utf8))
        keys = (coordinator, authorized)
    }

    /// A key pair `NAME.key`/`NAME.pub` in the cluster's directory, by `tessera keygen`; its path without extension.
    package func keygen(_ name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        let made = try Tool.run(binary, ["keygen", path])
        guard made.status == 0 else { throw ToolError("keygen: \(made.stderr)") }
        return path
    }

    /// The public key of a key pair made by `keygen`.
    package func publicKey(_ key: String) throws -> String {
        try String(contentsOfFile: key + ".pub", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Writes the authorized keys file: these key pairs' public keys, each named.
    package func authorize(_ keyPairs: [String]) throws {
        let lines = try keyPairs.map { "\(try publicKey($0)) \(URL(fileURLWithPath: $0).lastPathComponent)" }
        try (lines.joined(separator: "\n") + "\n").write(toFile: keys!.authorized, atomically: true, encoding: .utf8)
    }

    package func log(_ name: String) -> String {
        (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)) ?? ""
    }

    package func kill9(_ process: Process?) {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    package func submit(_ input: String, _ output: String, _ extra: [String] = []) throws -> String {
        let result = try Tool.run(binary, ["submit", input, "-o", output, "--preset", "veryfast", "--segment-seconds", "1"] + extra + db)
        guard result.status == 0 else { throw ToolError("submit: \(result.stderr)") }
        return result.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Waits for the job to end; its final state.
    package func wait(_ job: String, timeout: Double = 120) throws -> JobRecord {
        let store = try openStore()
        defer { store.close() }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let record = try store.job(job)
            if record.state.isFinal { return record }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw ToolError("job \(job) did not end in \(timeout) s")
    }

    /// Polls `condition` every 50 ms for up to `timeout` seconds.
    package func waitUntil(timeout: Double, _ condition: () throws -> Bool) rethrows {
        let deadline = Date().addingTimeInterval(timeout)
        while try !condition(), Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
    }

    package func openStore() throws -> JobStore {
        try JobStore(url: EmbeddedPostgres(directory: directory.appendingPathComponent("db")).url, reconnectTimeout: 5)
    }

    package func shutdown() {
        for (_, w) in workers where w.isRunning { w.terminate(); w.waitUntilExit() }
        if let c = coordinator, c.isRunning { c.terminate(); c.waitUntilExit() }
        _ = try? Tool.run(binary, ["db", "stop", "--force"] + db)
        // TESSERA_KEEP_CLUSTERS=1 keeps each cluster's logs and database for a look after a failure.
        if ProcessInfo.processInfo.environment["TESSERA_KEEP_CLUSTERS"] == nil { try? FileManager.default.removeItem(at: directory) }
    }
}
