import CPostgreSQL
import Foundation

/// A notification received on a LISTEN channel.
public struct PGNotification: Sendable {
    public let channel: String
    public let payload: String
}

/// One libpq connection. Parameterised statements only (prepared once per session, run with
/// PQexecPrepared): values never become SQL text.
/// Not thread-safe: use it from one thread at a time. Blocking: call it from a dedicated thread, never
/// from Swift's cooperative pool. After a lost connection it reconnects (with back-off, up to
/// `reconnectTimeout`) before the next statement.
public final class PGConnection {
    private var conn: OpaquePointer?
    /// Notifications taken from libpq by `hasNotifications`, not returned yet.
    private var buffered: [PGNotification] = []
    public let conninfo: String
    public var reconnectTimeout: TimeInterval
    /// Called after each failed reconnection attempt with its error; returning false gives up at once
    /// (the caller is stopping). With an infinite `reconnectTimeout`, the connection waits out an outage.
    public var reconnectAttemptFailed: ((PGError) -> Bool)?
    private var channels: Set<String> = []
    /// Session settings (`set(_:to:)`), applied again after a reconnect.
    private var settings: [(name: String, value: String)] = []
    private var closed = false
    /// Sessions opened so far: more than one means the connection was lost and made again (with
    /// `synchronous_commit = off`, the last commits may have been lost with the server).
    public private(set) var sessionsOpened = 1
    /// Statements prepared in this session, by their text: each is parsed and planned once per
    /// session, not on every run (the job store runs the same few statements thousands of times).
    private var prepared: [String: String] = [:]

    public init(conninfo: String, reconnectTimeout: TimeInterval = 30) throws(PGError) {
        self.conninfo = conninfo
        self.reconnectTimeout = reconnectTimeout
        try validate(conninfo)
        conn = try Self.connect(conninfo)
    }

    deinit {
        if conn != nil { PQfinish(conn) }
    }

    /// Ends the connection.
    public func close() {
        closed = true
        if conn != nil { PQfinish(conn) }
        conn = nil
    }

    private func validate(_ conninfo: String) throws(PGError) {
        var error: UnsafeMutablePointer<CChar>?
        let options = PQconninfoParse(conninfo, &error)
        defer {
            if let options { PQconninfoFree(options) }
            if let error { PQfreemem(error) }
        }
        if options == nil {
            throw PGError(.malformedURL, message: error.map { String(cString: $0) } ?? "malformed connection string", operation: "parse database URL")
        }
    }

    private static func connect(_ conninfo: String) throws(PGError) -> OpaquePointer {
        guard let c = PQconnectdb(conninfo) else { throw PGError(.connection, message: "out of memory", operation: "connect") }
        guard PQstatus(c) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(c))
            PQfinish(c)
            throw PGError(.connection, message: message, operation: "connect")
        }
        // Server notices (e.g. "already exists, skipping") are not for the user's terminal.
        PQsetNoticeProcessor(c, { _, _ in }, nil)
        return c
    }

    public var isConnected: Bool { conn != nil && PQstatus(conn) == CONNECTION_OK }

    /// The connection's socket, to wait on beside others (readable: notifications or an error arrived);
    /// nil while not connected.
    public var socketDescriptor: Int32? {
        guard isConnected else { return nil }
        let fd = PQsocket(conn)
        return fd >= 0 ? fd : nil
    }

    /// Reconnects with back-off until `reconnectTimeout`, then LISTENs again on every channel.
    private func reconnect() throws(PGError) {
        if conn != nil { PQfinish(conn); conn = nil }
        prepared.removeAll()
        let deadline = Date().addingTimeInterval(reconnectTimeout)
        var delay = 0.05
        var lastError = PGError(.connection, message: "no attempt", operation: "reconnect")
        while !closed {
            do {
                conn = try Self.connect(conninfo)
                sessionsOpened += 1
                for setting in settings {
                    _ = try execute("SELECT set_config($1, $2, false)", [setting.name, setting.value], retry: false)
                }
                for channel in channels { _ = try execute("LISTEN \(Self.quoteIdentifier(channel))", [], retry: false) }
                return
            } catch {
                lastError = error
                if let keepTrying = reconnectAttemptFailed, !keepTrying(error) { break }
            }
            guard Date() < deadline else { break }
            Thread.sleep(forTimeInterval: delay)
            delay = min(delay * 2, 1)
        }
        throw PGError(.connection, sqlState: lastError.sqlState, message: lastError.message, operation: "reconnect")
    }

    /// Runs one statement with `$1, $2, ...` parameters (nil is NULL) and returns its rows.
    /// A statement that fails because the connection broke is retried once after reconnecting, so
    /// statements sent through here must be safe to run twice.
    @discardableResult
    public func query(_ sql: String, _ parameters: [String?] = []) throws(PGError) -> PGRows {
        try execute(sql, parameters, retry: true)
    }

    private func execute(_ sql: String, _ parameters: [String?], retry: Bool) throws(PGError) -> PGRows {
        if closed { throw PGError(.connection, message: "connection is closed", operation: "query") }
        if !isConnected { try reconnect() }
        do {
            return try run(sql, parameters)
        } catch where error.kind == .connectionLost && retry {
            try reconnect()
            return try run(sql, parameters)
        }
    }

    private func run(_ sql: String, _ parameters: [String?]) throws(PGError) -> PGRows {
        let cStrings: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { cStrings.forEach { free($0) } }
        let values = cStrings.map { UnsafePointer($0) }
        let name = try statementName(sql, parameters: parameters.count)
        let result = values.withUnsafeBufferPointer { buffer in
            PQexecPrepared(conn, name, Int32(parameters.count), buffer.baseAddress, nil, nil, 0)
        }
        defer { PQclear(result) }
        guard let result, [PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY].contains(PQresultStatus(result)) else {
            throw failure(result, operation: "query")
        }
        return PGRows(result)
    }

    /// The error a failed (or missing) result stands for: its SQLSTATE and message, and whether the
    /// connection went with it.
    private func failure(_ result: OpaquePointer?, operation: String) -> PGError {
        let kind: PGError.Kind = PQstatus(conn) == CONNECTION_OK ? .statement : .connectionLost
        guard let result else { return PGError(kind, message: String(cString: PQerrorMessage(conn)), operation: operation) }
        let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        return PGError(kind, sqlState: state, message: String(cString: PQresultErrorMessage(result)), operation: operation)
    }

    /// The name `sql` is prepared under in this session, preparing it on first use.
    private func statementName(_ sql: String, parameters: Int) throws(PGError) -> String {
        if let name = prepared[sql] { return name }
        let name = "tessera_\(prepared.count + 1)"
        let result = PQprepare(conn, name, sql, Int32(parameters), nil)
        defer { PQclear(result) }
        guard let result, PQresultStatus(result) == PGRES_COMMAND_OK else { throw failure(result, operation: "prepare") }
        prepared[sql] = name
        return name
    }

    /// Runs a script of several statements (simple query protocol, no parameters): for the SQL
    /// migration files that ship with the program, never for values.
    public func executeScript(_ sql: String) throws(PGError) {
        if !isConnected { try reconnect() }
        let result = PQexec(conn, sql)
        defer { PQclear(result) }
        guard let result, [PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY].contains(PQresultStatus(result)) else {
            throw failure(result, operation: "script")
        }
    }

    /// Runs `body` in a transaction; rolls back when it throws. Not retried across a lost connection:
    /// the caller sees `.connectionLost` and decides.
    public func transaction<R>(_ body: () throws -> R) throws -> R {
        try query("BEGIN")
        do {
            let result = try body()
            try query("COMMIT")
            return result
        } catch {
            if isConnected { _ = try? run("ROLLBACK", []) }
            throw error
        }
    }

    /// Sets a run-time parameter for this session (and for the sessions after a reconnect).
    public func set(_ name: String, to value: String) throws(PGError) {
        settings.removeAll { $0.name == name }
        settings.append((name, value))
        try query("SELECT set_config($1, $2, false)", [name, value])
    }

    /// Starts listening on `channel` (kept across reconnects).
    public func listen(_ channel: String) throws(PGError) {
        channels.insert(channel)
        try query("LISTEN \(Self.quoteIdentifier(channel))")
    }

    /// Waits up to `timeout` seconds for notifications; returns what arrived (possibly nothing).
    public func waitForNotifications(timeout: TimeInterval) throws(PGError) -> [PGNotification] {
        if !isConnected { try reconnect() }
        var received = buffered + drainNotifications()
        buffered = []
        guard received.isEmpty else { return received }
        var fds = pollfd(fd: PQsocket(conn), events: Int16(POLLIN), revents: 0)
        let ready = poll(&fds, 1, Int32(max(0, (timeout * 1000).rounded(.up))))
        guard ready > 0 else { return [] }
        if PQconsumeInput(conn) == 0 {
            try reconnect()
            return []
        }
        received = drainNotifications()
        return received
    }

    /// Whether notifications wait that a query's answer brought in: they make the socket no more readable,
    /// so a wait on it alone would miss them.
    public var hasNotifications: Bool {
        buffered += drainNotifications()
        return !buffered.isEmpty
    }

    private func drainNotifications() -> [PGNotification] {
        var out: [PGNotification] = []
        while let n = PQnotifies(conn) {
            out.append(PGNotification(channel: String(cString: n.pointee.relname), payload: String(cString: n.pointee.extra)))
            PQfreemem(n)
        }
        return out
    }

    /// Quotes an identifier (a LISTEN channel) for the few statements that cannot take parameters.
    static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
