import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import TesseraCore

/// An HTTP/1.1 server on 127.0.0.1 (an ephemeral port) for a browser under test: GET serves the files below one
/// folder and a few documents held in memory; a POST's body is kept for the test to collect. One request per
/// connection. Loopback only: nothing else can reach it.
package final class LoopbackServer: Sendable {
    /// A document served from memory at its path (`/plan.json`), before the folder is looked at.
    package struct Document: Sendable {
        package var contentType: String
        package var bytes: [UInt8]

        package init(contentType: String, bytes: [UInt8]) {
            self.contentType = contentType
            self.bytes = bytes
        }
    }

    package let port: Int
    private let site: Site
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    package init(folder: URL, documents: [String: Document]) throws {
        site = Site(folder: folder.standardizedFileURL, documents: documents)
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let site = self.site
        do {
            channel = try ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        try channel.pipeline.syncOperations.addHandler(SiteHandler(site: site))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        port = channel.localAddress?.port ?? 0
    }

    /// `http://127.0.0.1:PORT` + `path`.
    package func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The body of the first POST to `path`, waiting up to `timeout` seconds for it, or until `abandon` holds; nil when
    /// none came.
    package func waitForPost(to path: String, timeout: Double, abandon: () -> Bool = { false }) -> Data? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline && !abandon() {
            if let body = site.posts.current[path] { return body }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return site.posts.current[path]
    }

    /// The paths asked for, in order (GET and POST).
    package var requests: [String] { site.requests.current }

    package func close() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }
}

/// What the server answers; shared by every connection's handler, so its mutable parts sit behind locks.
private final class Site: Sendable {
    let folder: URL
    let documents: [String: LoopbackServer.Document]
    let posts = Locked<[String: Data]>([:])
    let requests = Locked<[String]>([])

    init(folder: URL, documents: [String: LoopbackServer.Document]) {
        self.folder = folder
        self.documents = documents
    }

    func respond(_ head: HTTPRequestHead, body: Data) -> (HTTPResponseStatus, String, [UInt8]) {
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        requests.withValue { $0.append("\(head.method) \(path)") }
        switch head.method {
        case .POST:
            posts.withValue { if $0[path] == nil { $0[path] = body } }
            return (.noContent, "text/plain", [])
        case .GET:
            if let document = documents[path] { return (.ok, document.contentType, document.bytes) }
            guard let file = file(at: path), let bytes = FileManager.default.contents(atPath: file.path) else {
                return (.notFound, "text/plain", Array("not found: \(path)\n".utf8))
            }
            return (.ok, Self.contentType(of: file.pathExtension), Array(bytes))
        default:
            return (.methodNotAllowed, "text/plain", Array("GET or POST only\n".utf8))
        }
    }

    /// The file a URL path names, only when it lies inside the folder (no `..` escapes).
    func file(at path: String) -> URL? {
        guard let decoded = path.removingPercentEncoding, decoded.hasPrefix("/") else { return nil }
        let parts = decoded.split(separator: "/")
        guard !parts.isEmpty, !parts.contains(where: { $0 == ".." || $0 == "." }) else { return nil }
        return parts.reduce(folder) { $0.appendingPathComponent(String($1)) }
    }

    static func contentType(of fileExtension: String) -> String {
        switch fileExtension.lowercased() {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript"
        case "json": "application/json"
        case "m3u8": "application/vnd.apple.mpegurl"
        case "mpd": "application/dash+xml"
        case "mp4": "video/mp4"
        case "m4s": "video/iso.segment"
        default: "application/octet-stream"
        }
    }
}

/// One connection: gathers a request, answers it from the site, closes.
private final class SiteHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let site: Site
    var head: HTTPRequestHead?
    var body = ByteBuffer()

    init(site: Site) { self.site = site }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            head = request
            body.clear()
        case .body(var chunk):
            body.writeBuffer(&chunk)
        case .end:
            guard let request = head else { return }
            let (status, contentType, bytes) = site.respond(request, body: Data(body.readableBytesView))
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: contentType)
            headers.add(name: "Content-Length", value: String(bytes.count))
            headers.add(name: "Cache-Control", value: "no-store")
            headers.add(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: bytes)))), promise: nil)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
