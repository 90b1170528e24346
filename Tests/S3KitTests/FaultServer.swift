import Foundation

/// An S3 stand-in that answers `503 SlowDown` to the first `failures` requests, then 200 with a five-byte
/// object: what the retries see of a throttling or failing store. Python's http.server, on a port it picks.
final class FaultServer {
    let port: Int
    private let process: Process

    private static let script = """
        import http.server, sys
        failures = int(sys.argv[1]); seen = [0]
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def answer(self, body):
                seen[0] += 1
                if seen[0] <= failures:
                    error = b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
                    self.send_response(503); self.send_header("Content-Length", str(len(error))); self.end_headers()
                    if body: self.wfile.write(error)
                    return
                self.send_response(200); self.send_header("Content-Length", "5"); self.send_header("ETag", '"e1"'); self.end_headers()
                if body: self.wfile.write(b"hello")
            def do_HEAD(self): self.answer(False)
            def do_GET(self): self.answer(True)
            def log_message(self, *args): pass
        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """

    init(failures: Int) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, String(failures)]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        var line = Data()
        while let byte = try pipe.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) { line += byte }
        port = Int(String(decoding: line, as: UTF8.self)) ?? 0
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    var endpoint: String { "http://127.0.0.1:\(port)" }
}
