import Foundation
import TesseraCore
import TesseraStore
import TesseraTestSupport

/// Hosts for multi-host tests, made of network namespaces on this machine: each host a namespace with one
/// interface on a private network (10.77.0.0/24), all joined by a bridge in a switch namespace of their
/// own. No address is given outside the namespaces. Needs root (`ip netns`); `available` says whether
/// namespaces can be made here.
final class TestBed {
    struct Host {
        var name: String
        var namespace: String
        var address: String
        /// The switch's end of its link (cut it to cut the host off).
        var port: String
    }

    let tag: String
    let switchNamespace: String
    private(set) var hosts: [String: Host] = [:]
    let directory: URL
    private var processes: [(host: String, process: Process)] = []

    /// Whether network namespaces can be made here (root, iproute2): checked once by making one.
    static let available: Bool = {
        guard getuid() == 0 else { return false }
        let probe = "tsr-probe-\(getpid())"
        guard (try? Tool.run("ip", ["netns", "add", probe]).status) == 0 else { return false }
        _ = try? Tool.run("ip", ["netns", "del", probe])
        return true
    }()

    init(directory: URL) throws {
        tag = String(UUID().uuidString.prefix(4)).lowercased()
        switchNamespace = "tsr-\(tag)-sw"
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try ip(["netns", "add", switchNamespace])
        try ip(["-n", switchNamespace, "link", "add", "br0", "type", "bridge"])
        try ip(["-n", switchNamespace, "link", "set", "br0", "up"])
    }

    /// Adds host `name` at 10.77.0.`number`.
    @discardableResult
    func addHost(_ name: String, number: Int) throws -> Host {
        let namespace = "tsr-\(tag)-\(name)", port = "p\(number)"
        try ip(["netns", "add", namespace])
        try ip(["link", "add", "eth0", "netns", namespace, "type", "veth", "peer", "name", port, "netns", switchNamespace])
        try ip(["-n", switchNamespace, "link", "set", port, "master", "br0"])
        try ip(["-n", switchNamespace, "link", "set", port, "up"])
        let address = "10.77.0.\(number)"
        try ip(["-n", namespace, "addr", "add", "\(address)/24", "dev", "eth0"])
        try ip(["-n", namespace, "link", "set", "eth0", "up"])
        try ip(["-n", namespace, "link", "set", "lo", "up"])
        let host = Host(name: name, namespace: namespace, address: address, port: port)
        hosts[name] = host
        return host
    }

    /// Names every host resolves (through `ip netns exec`'s /etc/netns/NAMESPACE/hosts).
    func resolve(_ names: [(name: String, address: String)], on host: String) throws {
        let dir = URL(fileURLWithPath: "/etc/netns").appendingPathComponent(hosts[host]!.namespace)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let lines = ["127.0.0.1 localhost"] + names.map { "\($0.address) \($0.name)" }
        try (lines.joined(separator: "\n") + "\n").write(to: dir.appendingPathComponent("hosts"), atomically: true, encoding: .utf8)
    }

    /// Starts `arguments` on `host`, its stderr to `log` in the bed's directory, in `workingDirectory`, with
    /// `environment` added to the test's.
    @discardableResult
    func spawn(on host: String, _ arguments: [String], log: String, workingDirectory: URL? = nil,
               environment: [String: String] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        process.arguments = ["netns", "exec", hosts[host]!.namespace] + arguments
        let path = directory.appendingPathComponent(log).path
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        handle.seekToEndOfFile()
        process.standardError = handle
        process.standardOutput = handle
        process.standardInput = FileHandle.nullDevice
        if let workingDirectory { process.currentDirectoryURL = workingDirectory }
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        try process.run()
        processes.append((host, process))
        return process
    }

    /// Runs a command on `host` to completion, with `environment` added to the test's.
    @discardableResult
    func run(on host: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Tool.Output {
        try Tool.run("/usr/sbin/ip", ["netns", "exec", hosts[host]!.namespace] + arguments, environment: environment)
    }

    /// The processes in `host`'s namespace.
    func pids(on host: String) -> [Int32] {
        let pids = (try? Tool.run("ip", ["netns", "pids", hosts[host]!.namespace]).text) ?? ""
        return pids.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }
    }

    /// Kills every process in `host`'s namespace with SIGKILL, as a host that loses power.
    func killEverything(on host: String) {
        for pid in pids(on: host) { kill(pid, SIGKILL) }
        for (h, process) in processes where h == host { process.waitUntilExit() }
    }

    /// Stops every process in `host`'s namespace with SIGTERM, as a host shut down, and waits up to `timeout`
    /// seconds for them to exit; true when they all did.
    func terminateEverything(on host: String, timeout: Double) -> Bool {
        for pid in pids(on: host) { kill(pid, SIGTERM) }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if pids(on: host).isEmpty { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    /// Stops what was started on `host` (SIGTERM) and waits for it.
    func stop(on host: String) {
        for (h, process) in processes where h == host && process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// Cuts `host` off the network (its switch port goes down), or joins it again.
    func link(_ host: String, up: Bool) throws {
        try ip(["-n", switchNamespace, "link", "set", hosts[host]!.port, up ? "up" : "down"])
    }

    /// Drops `percent` % of the packets `host` sends and receives, at random (nftables' numgen).
    func dropPackets(on host: String, percent: Int) throws {
        let rules = """
            table inet tsrloss {
                chain in { type filter hook input priority 0; numgen random mod 100 < \(percent) drop; }
                chain out { type filter hook output priority 0; numgen random mod 100 < \(percent) drop; }
            }
            """
        let file = directory.appendingPathComponent("loss-\(host).nft")
        try rules.write(to: file, atomically: true, encoding: .utf8)
        let result = try run(on: host, ["nft", "-f", file.path])
        guard result.status == 0 else { throw ToolError("nft on \(host): \(result.stderr)") }
    }

    /// Starts, on `host`, a TCP relay from `listen` (address:port) to `target` that holds every chunk of
    /// data `delay` seconds each way: latency for a kernel without sch_netem.
    @discardableResult
    func relay(on host: String, listen: String, to target: String, delay: Double) throws -> Process {
        let script = directory.appendingPathComponent("delay_relay.py")
        try Self.relayScript.write(to: script, atomically: true, encoding: .utf8)
        let process = try spawn(on: host, ["python3", script.path, listen, target, String(delay)], log: "relay-\(host).log")
        let port = listen.split(separator: ":").last.map(String.init) ?? ""
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if (try? run(on: host, ["ss", "-Hltn", "sport = :\(port)"]).text.isEmpty) == false { return process }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw ToolError("the relay on \(host) did not listen: \(log("relay-\(host).log"))")
    }

    static let relayScript = """
        import asyncio, sys, time
        listen_host, listen_port = sys.argv[1].rsplit(":", 1)
        target_host, target_port = sys.argv[2].rsplit(":", 1)
        delay = float(sys.argv[3])

        async def pump(reader, writer):
            queue = asyncio.Queue()
            async def deliver():
                while True:
                    due, data = await queue.get()
                    if data is None:
                        break
                    await asyncio.sleep(max(0.0, due - time.monotonic()))
                    writer.write(data)
                    await writer.drain()
                writer.close()
            sender = asyncio.ensure_future(deliver())
            try:
                while True:
                    data = await reader.read(65536)
                    if not data:
                        break
                    queue.put_nowait((time.monotonic() + delay, data))
            except ConnectionError:
                pass
            queue.put_nowait((0, None))
            await sender

        async def handle(client_reader, client_writer):
            try:
                upstream_reader, upstream_writer = await asyncio.open_connection(target_host, int(target_port))
            except OSError:
                client_writer.close()
                return
            await asyncio.gather(pump(client_reader, upstream_writer), pump(upstream_reader, client_writer), return_exceptions=True)

        async def main():
            server = await asyncio.start_server(handle, listen_host, int(listen_port))
            async with server:
                await server.serve_forever()

        asyncio.run(main())
        """

    func log(_ name: String) -> String {
        (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)) ?? ""
    }

    /// Stops every process it started and removes the namespaces.
    func tearDown() {
        for (_, process) in processes where process.isRunning { process.terminate() }
        let deadline = Date().addingTimeInterval(10)
        for (_, process) in processes {
            while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        for host in hosts.values {
            killEverything(on: host.name)
            _ = try? Tool.run("ip", ["netns", "del", host.namespace])
            try? FileManager.default.removeItem(atPath: "/etc/netns/\(host.namespace)")
        }
        _ = try? Tool.run("ip", ["netns", "del", switchNamespace])
    }

    private func ip(_ arguments: [String]) throws {
        let result = try Tool.run("ip", arguments)
        guard result.status == 0 else { throw ToolError("ip \(arguments.joined(separator: " ")): \(result.stderr)") }
    }
}

/// PostgreSQL on a test-bed host: initialised by `tessera migrate` (the embedded server's layout), then
/// run in the foreground on the host's address, reachable from the bed's network only.
struct BedDatabase {
    let bed: TestBed
    let host: String
    let directory: URL

    var dataDirectory: String { directory.appendingPathComponent("pgdata").path }
    var url: String { "postgresql://\(EmbeddedPostgres.user)@\(bed.hosts[host]!.address):5432/\(EmbeddedPostgres.database)?connect_timeout=2" }
    /// The test's own view, over the server's Unix socket (the test process is on no host of the bed).
    var localURL: String { EmbeddedPostgres(directory: directory).url }

    static func binDirectory() throws -> String {
        let versions = try FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql").sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }
        guard let newest = versions.first else { throw ToolError("no PostgreSQL in /usr/lib/postgresql") }
        return "/usr/lib/postgresql/\(newest)/bin"
    }

    /// Initialises the database and starts it on `host`.
    static func start(on host: String, in bed: TestBed) throws -> BedDatabase {
        let db = BedDatabase(bed: bed, host: host, directory: bed.directory.appendingPathComponent("db"))
        let made = try Tool.run(Tool.tesseraBinary, ["migrate", "--data-dir", db.directory.path])
        guard made.status == 0 else { throw ToolError("migrate: \(made.stderr)") }
        let stopped = try Tool.run(Tool.tesseraBinary, ["db", "stop", "--data-dir", db.directory.path])
        guard stopped.status == 0 else { throw ToolError("db stop: \(stopped.stderr)") }
        let hba = db.dataDirectory + "/pg_hba.conf"
        let rules = (try String(contentsOfFile: hba, encoding: .utf8)) + "\nhost all all 10.77.0.0/24 trust\n"
        try rules.write(toFile: hba, atomically: false, encoding: .utf8)
        try db.run()
        return db
    }

    /// Runs the server on its host (as the postgres account under root) and waits until it answers.
    func run() throws {
        let runAs = getuid() == 0 ? ["runuser", "-u", "postgres", "--"] : []
        try bed.spawn(on: host, runAs + [try Self.binDirectory() + "/postgres", "-D", dataDirectory,
                                         "-c", "listen_addresses=\(bed.hosts[host]!.address)", "-c", "port=5432"], log: "postgres.log")
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let store = try? JobStore(url: localURL, reconnectTimeout: 0) {
                store.close()
                return
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw ToolError("PostgreSQL did not start on \(host): \(bed.log("postgres.log").suffix(500))")
    }

    /// The postmaster's process id, from its pid file.
    var postmaster: Int32? {
        (try? String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8))?
            .split(whereSeparator: \.isNewline).first.flatMap { Int32($0) }
    }

    /// Stops the server: `fast` (SIGINT: clients disconnected, a clean shutdown) or `immediate` (SIGQUIT:
    /// as a crash, recovery on the next start); waits until it is gone.
    func stop(mode: String = "immediate") {
        guard let pid = postmaster else { return }
        kill(pid, mode == "fast" ? SIGINT : SIGQUIT)
        let deadline = Date().addingTimeInterval(60)
        while kill(pid, 0) == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
    }

    /// Stops the server (`fast` or `immediate`), then starts it again.
    func restart(mode: String) throws {
        stop(mode: mode)
        try run()
    }

    func openStore() throws -> JobStore { try JobStore(url: localURL, reconnectTimeout: 10) }
}
