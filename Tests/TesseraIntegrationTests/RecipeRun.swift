import Foundation
import TesseraTestSupport

/// Runs the cluster recipe of docs/operations.md as written: each marked block with bash on the test-bed
/// host it names, in the document's order, one shell per host (what a block exports, the next on its host
/// sees), from empty hosts to verified outputs.
final class RecipeRun {
    /// The hosts of the recipe, at 10.77.0.N, and the names the document's settings give them.
    static let addresses = ["db": 1, "coordinator": 2, "worker1": 11, "worker2": 12, "worker3": 13]
    static let names = [("db.example", "db"), ("coordinator.example", "coordinator")]
    /// How long one block that ends may take.
    static let blockTimeout = 300.0

    let bed: TestBed
    let root: URL
    let pgVersion: String
    let password = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    private var services: [(host: String, line: Int, process: Process)] = []
    private var runs = 0
    /// Where a host's shell starts: its prefix, or a checkout for the systemd recipe (which names deploy/systemd).
    var startDirectory: URL?

    init() throws {
        root = Fixtures.directory.appendingPathComponent("recipe-\(UUID().uuidString.prefix(6))")
        bed = try TestBed(directory: root)
        pgVersion = URL(fileURLWithPath: try BedDatabase.binDirectory()).deletingLastPathComponent().lastPathComponent
        do {
            for (name, number) in Self.addresses.sorted(by: { $0.value < $1.value }) { try bed.addHost(name, number: number) }
            let names = Self.names.map { (name: $0.0, address: bed.hosts[$0.1]!.address) }
            for host in Self.addresses.keys { try bed.resolve(names, on: host) }
            // The installed binary: the one built, first on PATH; then sudo and systemctl for the systemd recipe.
            let bin = root.appendingPathComponent("bin")
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: bin.appendingPathComponent("tessera").path, withDestinationPath: Tool.tesseraBinary)
            for (name, text) in [("sudo", SystemdStandIn.sudo), ("systemctl", SystemdStandIn.systemctl)] {
                let file = bin.appendingPathComponent(name)
                try text.write(to: file, atomically: true, encoding: .utf8)
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: file.path)
            }
            try installPostgreSQL()
        } catch {
            bed.tearDown()
            throw error
        }
    }

    /// A host's own file system root under the bed (its /etc/tessera, /var/lib/tessera, /media).
    func prefix(_ host: String) -> URL { root.appendingPathComponent("hosts/\(host)") }

    /// What Debian's postgresql package does on the db host: the cluster `VERSION/main`, started, on localhost
    /// only. postgresql-common's PG_CLUSTER_CONF_ROOT keeps its configuration in the host's prefix, and its
    /// socket directory there too (file system sockets are shared by the namespaces).
    func installPostgreSQL() throws {
        let base = prefix("db")
        for dir in ["run/postgresql", "log/postgresql"] {
            let url = base.appendingPathComponent(dir)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            guard try Tool.run("chown", ["postgres:postgres", url.path]).status == 0 else { throw ToolError("chown \(url.path)") }
        }
        let made = try Tool.run("pg_createcluster", [pgVersion, "main", "--datadir", base.appendingPathComponent("var/lib/postgresql/\(pgVersion)/main").path,
                                                     "--socketdir", base.appendingPathComponent("run/postgresql").path,
                                                     "--logfile", base.appendingPathComponent("log/postgresql/postgresql.log").path],
                                environment: environment("db"))
        guard made.status == 0 else { throw ToolError("pg_createcluster: \(made.stderr)") }
        let started = try pgControl("start")
        guard started.status == 0 else { throw ToolError("pg_ctlcluster start: \(started.stderr)") }
    }

    /// pg_ctlcluster on the db host.
    @discardableResult
    func pgControl(_ arguments: String) throws -> Tool.Output {
        try bed.run(on: "db", Self.launch + ["pg_ctlcluster", pgVersion, "main"] + arguments.split(separator: " ").map(String.init),
                    environment: environment("db"))
    }

    /// Runs the command that follows without the descriptors its shell inherited beyond 0-2, and waits for it.
    /// Foundation learns that a child exited when a socket the child inherits closes: the shell keeps it until
    /// the command ends, and a daemon the command starts (a PostgreSQL server) must not hold it.
    static let launch = ["bash", "-c", #"r=""; for fd in /proc/$$/fd/*; do fd=${fd##*/}; if (( fd > 2 )); then r+=" $fd>&-"; fi; done; eval "\"\$@\"$r"; exit $?"#, "launch"]

    /// A host's environment: the installed binary on PATH, the document's paths rooted in the host's prefix,
    /// the password on the hosts that need it, and PostgreSQL's own variables on the db host.
    func environment(_ host: String) -> [String: String] {
        let base = prefix(host)
        var environment = [
            "PATH": root.appendingPathComponent("bin").path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "CONF_DIR": base.appendingPathComponent("etc/tessera").path,
            "STATE_DIR": base.appendingPathComponent("var/lib/tessera").path,
            "MEDIA_DIR": base.appendingPathComponent("media").path,
            "PG_VERSION": pgVersion,
            // The build an upgrade installs: this one.
            "NEW_TESSERA": Tool.tesseraBinary,
            "HOME": base.path,
        ]
        if host == "db" || host == "coordinator" { environment["DB_PASSWORD"] = password }
        if host == "db" {
            environment["PG_CLUSTER_CONF_ROOT"] = base.appendingPathComponent("etc/postgresql").path
            environment["PGHOST"] = base.appendingPathComponent("run/postgresql").path
        }
        return environment
    }

    /// The public keys made so far, as the document names them: COORDINATOR_PUB, WORKER1_PUB, … (from the
    /// host's `$CONF_DIR`, or its /etc/tessera in the systemd recipe).
    func publicKeys() -> [String: String] {
        var keys: [String: String] = [:]
        for host in Self.addresses.keys where host != "db" {
            let name = "\(host == "coordinator" ? "coordinator" : "worker").pub"
            let files = [prefix(host).appendingPathComponent("etc/tessera/\(name)"), upper(host, "/etc").appendingPathComponent("tessera/\(name)")]
            if let key = files.lazy.compactMap({ try? String(contentsOf: $0, encoding: .utf8) }).first {
                keys[host.uppercased() + "_PUB"] = key.trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        return keys
    }

    /// The script that runs `block` on `host`: the host's shell so far, the public keys copied over, the block
    /// as written, then the shell's exports and directory kept for the host's next block.
    func script(_ block: DocRecipe.Block, on host: String) throws -> URL {
        let shell = root.appendingPathComponent("shell-\(host)")
        let keys = publicKeys().sorted { $0.key < $1.key }.map { "export \($0.key)='\($0.value)'" }.joined(separator: "\n")
        let text = """
            set -euo pipefail
            if [[ -f \(shell.path).env ]]; then source \(shell.path).env; cd "$(cat \(shell.path).cwd)"; else cd \((startDirectory ?? prefix(host)).path); fi
            \(keys)
            \(block.text)
            export -p > \(shell.path).env
            pwd > \(shell.path).cwd

            """
        runs += 1
        let url = root.appendingPathComponent("block-\(runs)-\(host).sh")
        try FileManager.default.createDirectory(at: prefix(host), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    /// Runs every block of `recipe` in order; a block that fails, or a process that stops, fails the run. With
    /// `overlaid`, each block sees its host's own system directories (`overlays`).
    func run(_ recipe: DocRecipe, overlaid: Bool = false) throws {
        for block in recipe.blocks {
            for host in block.everyHost ? Self.addresses.keys.sorted() : block.hosts {
                guard bed.hosts[host] != nil else { throw ToolError("line \(block.line): no host \(host) in the test bed") }
                let command = (overlaid ? overlays(host) : []) + Self.launch + ["bash", try script(block, on: host).path]
                if block.runsUntilStopped {
                    let process = try bed.spawn(on: host, command, log: "\(host).log", environment: environment(host))
                    services.append((host, block.line, process))
                } else {
                    try runToEnd(command, on: host, line: block.line)
                }
            }
        }
        try checkServices()
    }

    /// The system directories a host's blocks write in the systemd recipe, as overlays kept in its prefix.
    static let overlaid = ["/etc", "/usr/lib", "/usr/local/bin", "/var/lib", "/var/log", "/run"]

    /// Whether a mount namespace with an overlay can be made here (root, util-linux's unshare, overlayfs).
    static let overlaysAvailable: Bool = {
        guard TestBed.available else { return false }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-overlay-probe-\(getpid())")
        defer { try? FileManager.default.removeItem(at: dir) }
        for sub in ["lower", "upper", "work", "merged"] {
            try? FileManager.default.createDirectory(at: dir.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        let mount = "mount -t overlay overlay -o lowerdir=\(dir.path)/lower,upperdir=\(dir.path)/upper,workdir=\(dir.path)/work \(dir.path)/merged"
        return (try? Tool.run("unshare", ["--mount", "--propagation", "private", "sh", "-c", mount]).status) == 0
    }()

    /// What `directory` of `host` holds beyond the machine's own.
    func upper(_ host: String, _ directory: String) -> URL {
        prefix(host).appendingPathComponent("overlay/\(directory.replacingOccurrences(of: "/", with: "_"))/upper")
    }

    /// Runs the command that follows in a mount namespace of its own where `host`'s overlays cover the system
    /// directories, the test bed's /etc/hosts and the built binary as /usr/local/bin/tessera.
    func overlays(_ host: String) -> [String] {
        let script = #"""
            set -e
            o=$1 tessera=$2; shift 2
            mkdir -p "$o" && cp /etc/hosts "$o/hosts"
            for d in \#(Self.overlaid.joined(separator: " ")); do
                n=${d//\//_}; mkdir -p "$o/$n/upper" "$o/$n/work"
                [[ $d != /usr/local/bin ]] || ln -sf "$tessera" "$o/$n/upper/tessera"
                mount -t overlay overlay -o "lowerdir=$d,upperdir=$o/$n/upper,workdir=$o/$n/work" "$d"
            done
            mount --bind "$o/hosts" /etc/hosts
            exec "$@"
            """#
        return ["unshare", "--mount", "--propagation", "private", "bash", "-c", script, "overlays",
                prefix(host).appendingPathComponent("overlay").path, Tool.tesseraBinary]
    }

    func runToEnd(_ command: [String], on host: String, line: Int) throws {
        let log = "block-line\(line)-\(host).log"
        let process = try bed.spawn(on: host, command, log: log, environment: environment(host))
        let deadline = Date().addingTimeInterval(Self.blockTimeout)
        while process.isRunning {
            if Date() > deadline {
                process.terminate()
                throw ToolError("the block at line \(line) on \(host) ran over \(Self.blockTimeout) s:\n\(bed.log(log).suffix(2000))\n\(serviceLogs())")
            }
            try checkServices()
            Thread.sleep(forTimeInterval: 0.1)
        }
        guard process.terminationStatus == 0 else {
            throw ToolError("the block at line \(line) on \(host) failed (exit \(process.terminationStatus)):\n\(bed.log(log).suffix(3000))\n\(serviceLogs())")
        }
    }

    /// Fails when a process a block started has stopped.
    func checkServices() throws {
        for service in services where !service.process.isRunning {
            throw ToolError("the process started at line \(service.line) on \(service.host) stopped (exit \(service.process.terminationStatus)):\n"
                            + bed.log("\(service.host).log").suffix(3000))
        }
    }

    func serviceLogs() -> String {
        Set(services.map(\.host)).sorted().map { "--- \($0)\n" + bed.log("\($0).log").suffix(2000) }.joined(separator: "\n")
    }

    /// Stops the coordinator and the workers (SIGTERM, as a shutdown) and PostgreSQL, and removes the hosts.
    func tearDown() {
        for host in ["worker1", "worker2", "worker3", "coordinator"] { _ = bed.terminateEverything(on: host, timeout: 30) }
        _ = try? pgControl("stop -m immediate")
        bed.tearDown()
        try? FileManager.default.removeItem(at: root)
    }
}
