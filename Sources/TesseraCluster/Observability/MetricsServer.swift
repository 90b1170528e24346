import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import TesseraCore

/// The operator's listener (`--metrics-listen HOST:PORT`): `/metrics` (Prometheus text), `/healthz` (the
/// process answers) and `/readyz` (it can do its work), over HTTP/1.1 from SwiftNIO. One request per
/// connection. What may block (the store) runs on one thread of its own, never on the event loop.
public struct MetricsServer: Service {
    /// What the listener asks the process. Both run on the listener's blocking thread, one at a time.
    public struct Probes: Sendable {
        /// `coordinator` or `worker`: the `role` of `tessera_build_info`.
        public var role: String
        /// Brings the gauges read at scrape time up to date before `/metrics` renders, and returns the families it
        /// writes itself (exposition text; empty for none).
        public var refresh: @Sendable () -> String
        /// Why the process is not ready; nil when it is.
        public var notReady: @Sendable () -> String?

        public init(role: String, refresh: @escaping @Sendable () -> String = { "" }, notReady: @escaping @Sendable () -> String?) {
            self.role = role
            self.refresh = refresh
            self.notReady = notReady
        }
    }

    public let host: String
    public let port: Int
    let probes: Probes
    let logger: Logger
    let boundPort = Locked<Int?>(nil)

    public init(host: String, port: Int, probes: Probes, logger: Logger) {
        self.host = host
        self.port = port
        self.probes = probes
        self.logger = logger
    }

    /// `HOST:PORT` (`[::1]:9090` for IPv6) as given to `--metrics-listen`.
    public static func parse(_ listen: String) -> (host: String, port: Int)? {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        var host = String(listen[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    /// The port bound, once listening (the real one when 0 was asked for).
    public var listeningPort: Int? { boundPort.current }

    typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    public func run() async throws {
        let events = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let blocking = NIOThreadPool(numberOfThreads: 1)
        blocking.start()
        do {
            try await serve(events, blocking)
        } catch {
            try? await blocking.shutdownGracefully()
            try? await events.shutdownGracefully()
            throw error
        }
        try? await blocking.shutdownGracefully()
        try? await events.shutdownGracefully()
    }

    func serve(_ events: MultiThreadedEventLoopGroup, _ blocking: NIOThreadPool) async throws {
        let server: NIOAsyncChannel<Connection, Never>
        do {
            server = try await ServerBootstrap(group: events)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        return try Connection(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw ObservabilityError(.listen, "cannot listen on \(host):\(port) for metrics: \(error)")
        }
        let bound = server.channel.localAddress?.port ?? port
        boundPort.withValue { $0 = bound }
        logger.info("metrics listening", metadata: ["metrics.address": "\(host):\(bound)"])
        try await withTaskCancellationOrGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { await handle(connection, blocking) }
                    }
                }
                // Closed: connections still open (a client that sent nothing) end too.
                group.cancelAll()
            }
        } onCancelOrGracefulShutdown: {
            server.channel.close(promise: nil)
        }
    }

    func handle(_ connection: Connection, _ blocking: NIOThreadPool) async {
        do {
            try await connection.executeThenClose { inbound, outbound in
                var request: HTTPRequestHead?
                for try await part in inbound {
                    switch part {
                    case .head(let head): request = head
                    case .body: continue
                    case .end:
                        guard let request else { return }
                        let (status, contentType, body) = await respond(to: request, blocking)
                        var headers = HTTPHeaders()
                        headers.add(name: "Content-Type", value: contentType)
                        headers.add(name: "Content-Length", value: String(body.count))
                        headers.add(name: "Connection", value: "close")
                        try await outbound.write(.head(HTTPResponseHead(version: request.version, status: status, headers: headers)))
                        try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body))))
                        try await outbound.write(.end(nil))
                        return
                    }
                }
            }
        } catch {
            logger.debug("metrics connection ended", metadata: ["error": "\(error)"])
        }
    }

    func respond(to request: HTTPRequestHead, _ blocking: NIOThreadPool) async -> (HTTPResponseStatus, String, [UInt8]) {
        let text = "text/plain; charset=utf-8"
        guard request.method == .GET else { return (.methodNotAllowed, text, Array("GET only\n".utf8)) }
        let path = request.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.uri
        switch path {
        case "/metrics":
            let probes = self.probes
            guard let body = try? await blocking.runIfActive({ () -> [UInt8] in
                let own = probes.refresh()
                return Observability.render(own: own, role: probes.role)
            }) else { return (.serviceUnavailable, text, Array("shutting down\n".utf8)) }
            return (.ok, "text/plain; version=0.0.4; charset=utf-8", body)
        case "/healthz":
            return (.ok, text, Array("ok\n".utf8))
        case "/readyz":
            let probes = self.probes
            let reason: String?
            do { reason = try await blocking.runIfActive { probes.notReady() } } catch { reason = "shutting down" }
            if let reason { return (.serviceUnavailable, text, Array("not ready: \(reason)\n".utf8)) }
            return (.ok, text, Array("ready\n".utf8))
        default:
            return (.notFound, text, Array("not found: /metrics, /healthz, /readyz\n".utf8))
        }
    }
}

/// An error of the metrics listener, by code.
public struct ObservabilityError: Error, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Value { case listen, address }
        let value: Value
        public static let listen = Code(value: .listen)
        public static let address = Code(value: .address)
        public var description: String { "\(value)" }
    }

    public let code: Code
    public let description: String

    init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
