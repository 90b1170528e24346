import Foundation

/// A GET over a real TCP socket to a `--metrics-listen` listener, for tests (one request per connection, as the
/// listener answers with `Connection: close`).
package enum HTTP {
    package struct Response {
        package var status: Int
        package var headers: [String: String]
        package var body: String

        package init(status: Int, headers: [String: String], body: String) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    package static func get(_ port: Int, _ path: String, timeout: Double = 5) throws -> Response {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ToolError("socket: \(errno)") }
        defer { close(fd) }
        var time = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw ToolError("connect to 127.0.0.1:\(port): errno \(errno)") }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: */*\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else { throw ToolError("send: \(errno)") }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { data += chunk[0..<n] } else if n == 0 { break } else { throw ToolError("recv from :\(port)\(path): errno \(errno)") }
        }
        let text = String(decoding: data, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw ToolError("no HTTP response from :\(port)\(path): \(text.prefix(200))") }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1."), let status = Int(statusLine.split(separator: " ")[1]) else {
            throw ToolError("bad status line: \(lines.first ?? "")")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let body = String(text[split.upperBound...])
        if let length = headers["content-length"].flatMap(Int.init), length != body.utf8.count {
            throw ToolError("body of \(body.utf8.count) bytes, Content-Length \(length)")
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// GETs `path` until it answers `status` (a listener that is still starting refuses the connection).
    @discardableResult
    package static func poll(_ port: Int, _ path: String, status: Int, timeout: Double = 20) throws -> Response {
        let deadline = Date().addingTimeInterval(timeout)
        var last: Result<Response, any Error> = .failure(ToolError("never asked"))
        while Date() < deadline {
            last = Result { try get(port, path) }
            if case .success(let response) = last, response.status == status { return response }
            Thread.sleep(forTimeInterval: 0.1)
        }
        let seen = (try? last.get()).map { "\($0.status) \($0.body)" } ?? "\(last)"
        throw ToolError(":\(port)\(path) did not answer \(status) within \(timeout) s: \(seen)")
    }

    /// Prometheus text as samples: `name{labels}` → value (comments skipped).
    package static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }
}
