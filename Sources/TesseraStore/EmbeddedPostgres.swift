import CTesseraShim
import Foundation
import PGClient

/// A private PostgreSQL server for one machine: `initdb` into a data directory, listening on a Unix
/// socket in that directory only (no TCP port), started with pg_ctl on first use and reused after.
/// `initdb` refuses to run as root, so when Tessera runs as root the server runs as Debian's
/// unprivileged `postgres` account, which owns the directory.
public struct EmbeddedPostgres: Sendable {
    public let directory: URL
    public static let database = "tessera"
    public static let user = "tessera"

    public init(directory: URL) {
        self.directory = directory.standardizedFileURL
    }

    /// `$XDG_STATE_HOME/tessera`, else `~/.local/state/tessera`; as root `/var/lib/tessera`, because the
    /// server account cannot enter root's home.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let chosen = environment["TESSERA_DATA_DIR"], !chosen.isEmpty { return URL(fileURLWithPath: chosen) }
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty,
           geteuid() != 0 || othersCanEnter(URL(fileURLWithPath: state).deletingLastPathComponent().path) {
            return URL(fileURLWithPath: state).appendingPathComponent("tessera")
        }
        if geteuid() == 0 { return URL(fileURLWithPath: "/var/lib/tessera") }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/state/tessera")
    }

    /// Whether another account (as root, the server runs as `postgres`) can reach `path`: every
    /// directory from the root down lets others search it.
    static func othersCanEnter(_ path: String) -> Bool {
        var current = URL(fileURLWithPath: path).standardizedFileURL
        while true {
            var info = stat()
            if stat(current.path, &info) == 0, info.st_mode & S_IXOTH == 0 { return false }
            if current.path == "/" { return true }
            current = current.deletingLastPathComponent()
        }
    }

    /// Whether the server's directory has been initialised (the first `start` does it).
    public var isInitialised: Bool { FileManager.default.fileExists(atPath: dataDirectory.appendingPathComponent("PG_VERSION").path) }

    var dataDirectory: URL { directory.appendingPathComponent("pgdata") }
    var logFile: URL { directory.appendingPathComponent("postgres.log") }
    static var asRoot: Bool { geteuid() == 0 }

    /// libpq connection string for the Tessera database on this server.
    public var url: String { "host='\(escaped(directory.path))' dbname=\(Self.database) user=\(Self.user)" }
    var maintenanceURL: String { url(database: "postgres") }

    /// libpq connection string for another database on this server.
    public func url(database: String) -> String { "host='\(escaped(directory.path))' dbname=\(database) user=\(Self.user)" }

    func escaped(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
    }

    /// The PostgreSQL server programs: `TESSERA_PG_BINDIR`, else `pg_config --bindir`, else Debian's
    /// /usr/lib/postgresql/N/bin.
    public static func binDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) throws(StoreError) -> URL {
        var candidates: [String] = []
        if let dir = environment["TESSERA_PG_BINDIR"] {
            candidates = [dir]
        } else {
            if let out = try? Command.run("/usr/bin/env", ["pg_config", "--bindir"]), out.status == 0 {
                candidates.append(out.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
            candidates += versions.sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }.map { "/usr/lib/postgresql/\($0)/bin" }
        }
        for dir in candidates where ["initdb", "pg_ctl", "postgres"].allSatisfy({
            FileManager.default.isExecutableFile(atPath: "\(dir)/\($0)")
        }) {
            return URL(fileURLWithPath: dir)
        }
        throw StoreError("the PostgreSQL server is not installed (no initdb and pg_ctl in \(candidates.first ?? "pg_config --bindir")); on Debian: apt-get install postgresql, or pass --database-url")
    }

    public struct Status: Sendable {
        public var running: Bool
        public var initialised: Bool
        public var directory: String
        public var detail: String
    }

    public func status() throws(StoreError) -> Status {
        let initialised = FileManager.default.fileExists(atPath: dataDirectory.appendingPathComponent("PG_VERSION").path)
        guard initialised else { return Status(running: false, initialised: false, directory: directory.path, detail: "not initialised") }
        let out = try pgctl(["status", "-D", dataDirectory.path])
        return Status(running: out.status == 0, initialised: true, directory: directory.path,
                      detail: out.stdout.split(whereSeparator: \.isNewline).first.map(String.init) ?? "")
    }

    /// Whether the server runs with its database: a connection made and closed, in a millisecond.
    public var isAnswering: Bool {
        guard let running = answeringSession() else { return false }
        running.close()
        return true
    }

    /// A session with the server when it runs with its database, else nil: what `isAnswering` asks, kept
    /// for the asker (each session costs the server a process start, about 3 ms of processor time).
    func answeringSession() -> PGConnection? {
        guard FileManager.default.fileExists(atPath: dataDirectory.appendingPathComponent("PG_VERSION").path) else { return nil }
        return try? PGConnection(conninfo: url, reconnectTimeout: 0)
    }

    /// Initialises the directory if needed, starts the server if it is not running, and creates the
    /// Tessera database. Safe to call from several processes at once.
    public func start() throws(StoreError) {
        // Already running with its database (the usual case): a connection says so in a millisecond,
        // where the checks below run several programs.
        if isAnswering { return }
        let bin = try Self.binDirectory()
        try prepareDirectory()
        try withLock { () throws(StoreError) in
            if !FileManager.default.fileExists(atPath: dataDirectory.appendingPathComponent("PG_VERSION").path) {
                let out = try serverCommand(bin.appendingPathComponent("initdb").path,
                                            ["-D", dataDirectory.path, "-U", Self.user, "-A", "trust", "-E", "UTF8", "--no-instructions"])
                guard out.status == 0 else { throw StoreError("initdb in \(dataDirectory.path) failed: \(out.lastLine)") }
                let settings = """

                    # Tessera: Unix socket in the state directory only, no TCP.
                    listen_addresses = ''
                    unix_socket_directories = '\(directory.path.replacingOccurrences(of: "'", with: "''"))'
                    max_connections = 200

                    """
                do {
                    let conf = dataDirectory.appendingPathComponent("postgresql.conf")
                    let handle = try FileHandle(forWritingTo: conf)
                    try handle.seekToEnd()
                    try handle.write(contentsOf: Data(settings.utf8))
                    try handle.close()
                } catch {
                    throw StoreError("cannot configure \(dataDirectory.path): \(error.localizedDescription)")
                }
            }
            if try status().running == false {
                let out = try pgctl(["start", "-D", dataDirectory.path, "-l", logFile.path, "-w", "-t", "60"])
                guard out.status == 0 else {
                    throw StoreError("PostgreSQL did not start in \(directory.path): \(out.lastLine) (see \(logFile.path))")
                }
            }
            try ensureDatabase()
        }
    }

    public func stop() throws(StoreError) {
        guard try status().running else { return }
        let out = try pgctl(["stop", "-D", dataDirectory.path, "-m", "fast", "-w", "-t", "60"])
        guard out.status == 0 else { throw StoreError("PostgreSQL did not stop: \(out.lastLine)") }
    }

    func ensureDatabase() throws(StoreError) {
        do {
            let admin = try PGConnection(conninfo: maintenanceURL, reconnectTimeout: 0)
            defer { admin.close() }
            let exists = try admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [Self.database])
            if exists.isEmpty {
                do {
                    try admin.query("CREATE DATABASE \(Self.database)")
                } catch where error.sqlState == "42P04" {
                    // Another process created it first.
                }
            }
        } catch {
            throw StoreError(error, "cannot create the \(Self.database) database")
        }
    }

    func prepareDirectory() throws(StoreError) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError("cannot create \(directory.path): \(error.localizedDescription)")
        }
        if Self.asRoot {
            let out = try Command.run("/bin/chown", ["postgres:postgres", directory.path])
            guard out.status == 0 else { throw StoreError("cannot hand \(directory.path) to the postgres account: \(out.lastLine)") }
        }
    }

    func pgctl(_ arguments: [String]) throws(StoreError) -> Command.Output {
        try serverCommand(try Self.binDirectory().appendingPathComponent("pg_ctl").path, arguments)
    }

    /// Runs a server program, as the postgres account when we are root.
    func serverCommand(_ program: String, _ arguments: [String]) throws(StoreError) -> Command.Output {
        if Self.asRoot {
            return try Command.run("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments, directory: directory.path)
        }
        return try Command.run(program, arguments, directory: directory.path)
    }

    /// Serialises starts across processes with an exclusive lock on a file in the directory.
    func withLock<R>(_ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        let path = directory.appendingPathComponent(".tessera-start.lock").path
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        flock(fd, LOCK_EX)
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}

/// Runs a program to completion and captures its output. posix_spawn and waitpid rather than
/// Foundation's Process: `pg_ctl start` leaves a daemon behind, and no descriptor of ours may leak into
/// it (every descriptor but the three standard ones is closed in the child).
enum Command {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
        var lastLine: String {
            (stderr + "\n" + stdout).split(whereSeparator: \.isNewline).last.map(String.init) ?? "exit \(status)"
        }
    }

    static func run(_ program: String, _ arguments: [String], directory: String? = nil) throws(StoreError) -> Output {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-cmd-\(UUID().uuidString)")
        let outPath = base.path + ".out", errPath = base.path + ".err"
        defer {
            unlink(outPath)
            unlink(errPath)
        }
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let exit = tessera_spawn_wait(argv, directory, outPath, errPath)
        guard exit >= 0 else { throw StoreError("cannot run \(program): \(String(cString: strerror(-exit)))") }
        let stdout = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return Output(status: exit, stdout: stdout, stderr: stderr)
    }
}
