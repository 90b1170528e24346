import Foundation

/// A front for moto that checks presigned URLs as S3 does, which moto with authentication on cannot (moto 5.2
/// looks for an Authorization header in every request and answers a presigned GET with 500): a presigned request is
/// verified here (AWS's query-string SigV4, written from its documentation with Python's hmac and hashlib, and its
/// expiry), then sent on signed with the same key, so moto's IAM still decides what the key may read. Requests
/// signed in their headers pass through untouched, to be checked by moto. With `faults`, that share of requests
/// fails as a flaky store fails them, half answered 503 SlowDown unseen by moto, half sent on and then dropped
/// without an answer (the store did the work; the client cannot know), in an order fixed by a seed.
package final class PresignedFront {
    package let port: Int
    private let process: Process

    package init(upstream: Int, keys: [AWSKeyPair], faults: Double = 0) throws {
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = Int.random(in: 20_000..<60_000)
            do {
                process = try Self.start(port: port, upstream: upstream, keys: keys, faults: faults)
                self.port = port
                return
            } catch {
                lastError = error
            }
        }
        throw lastError!
    }

    package struct AWSKeyPair: Encodable {
        let id: String, secret: String
        package init(_ id: String, _ secret: String) { (self.id, self.secret) = (id, secret) }
        package func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(id)
            try container.encode(secret)
        }
    }

    private static func start(port: Int, upstream: Int, keys: [AWSKeyPair], faults: Double) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, String(port), String(upstream), String(decoding: try JSONEncoder().encode(keys), as: UTF8.self), String(faults)]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let line = String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self)
        guard line.hasPrefix("ready") else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "the presigned-URL front did not start on port \(port)"])
        }
        return process
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    private static let script = #"""
        import datetime, hashlib, hmac, http.client, http.server, json, random, socket, sys, urllib.parse
        from botocore.auth import S3SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        port, upstream, keys, faults = int(sys.argv[1]), int(sys.argv[2]), dict(json.loads(sys.argv[3])), float(sys.argv[4])
        chance = random.Random(7)
        HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "expect"}

        def quote(text):
            return urllib.parse.quote(text, safe="-_.~")

        def error(code, message):
            return 403, ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>%s</Code><Message>%s</Message></Error>" % (code, message)).encode()

        def verify(method, path, pairs, headers):
            """AWS's query-string SigV4 check, written from its documentation: (status, body) on refusal, else the key."""
            query = dict(pairs)
            try:
                access, day, region, service, terminal = query["X-Amz-Credential"].split("/")
                stamp, expires, signed = query["X-Amz-Date"], int(query["X-Amz-Expires"]), query["X-Amz-SignedHeaders"]
                signature = query["X-Amz-Signature"]
            except (KeyError, ValueError):
                return error("AuthorizationQueryParametersError", "malformed presigned query"), None
            if access not in keys:
                return error("InvalidAccessKeyId", "unknown key"), None
            start = datetime.datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
            if datetime.datetime.now(datetime.timezone.utc) > start + datetime.timedelta(seconds=expires):
                return error("AccessDenied", "Request has expired"), None
            canonical_query = "&".join("%s=%s" % (quote(k), quote(v)) for k, v in sorted(pairs) if k != "X-Amz-Signature")
            canonical_headers = "".join("%s:%s\n" % (name, " ".join(headers.get(name, "").split())) for name in signed.split(";"))
            canonical = "\n".join([method, quote_path(path), canonical_query, canonical_headers, signed, "UNSIGNED-PAYLOAD"])
            scope = "/".join([day, region, service, terminal])
            to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
            key = ("AWS4" + keys[access]).encode()
            for part in (day, region, service, terminal):
                key = hmac.new(key, part.encode(), hashlib.sha256).digest()
            if not hmac.compare_digest(hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest(), signature):
                return error("SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided."), None
            return None, (access, region)

        def quote_path(path):
            return "/".join(quote(urllib.parse.unquote(segment)) for segment in path.split("/"))

        class Front(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def relay(self):
                path, _, raw_query = self.path.partition("?")
                pairs = urllib.parse.parse_qsl(raw_query, keep_blank_values=True)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
                fault = chance.random()
                if fault < faults / 2:
                    return self.answer(503, {"Content-Type": "application/xml"},
                                       b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>")
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
                if any(k == "X-Amz-Signature" for k, _ in pairs):
                    refusal, signer = verify(self.command, path, pairs, {k.lower(): v for k, v in self.headers.items()})
                    if refusal:
                        return self.answer(refusal[0], {"Content-Type": "application/xml"}, refusal[1])
                    rest = [(k, v) for k, v in pairs if not k.startswith("X-Amz-")]
                    target = path + ("?" + urllib.parse.urlencode(rest, quote_via=urllib.parse.quote) if rest else "")
                    request = AWSRequest(method=self.command, url="http://127.0.0.1:%d%s" % (upstream, target), headers=headers, data=body)
                    S3SigV4Auth(Credentials(signer[0], keys[signer[0]]), "s3", signer[1]).add_auth(request)
                    headers, send_path, host = dict(request.headers.items()), target, "127.0.0.1:%d" % upstream
                else:
                    send_path, host = self.path, self.headers.get("Host", "")
                connection = http.client.HTTPConnection("127.0.0.1", upstream, timeout=60)
                connection.putrequest(self.command, send_path, skip_host=True, skip_accept_encoding=True)
                connection.putheader("Host", host)
                for k, v in headers.items():
                    if k.lower() != "host":
                        connection.putheader(k, v)
                connection.putheader("Content-Length", str(len(body)))
                connection.endheaders(body)
                response = connection.getresponse()
                data = response.read()
                if fault < faults:
                    connection.close()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                headers = {k: v for k, v in response.getheaders() if k.lower() not in HOP}
                self.answer(response.status, headers, data, response.getheader("Content-Length") if self.command == "HEAD" else None)
                connection.close()

            def answer(self, status, headers, data, length=None):
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                # A HEAD answers with the length the GET would have.
                self.send_header("Content-Length", length or str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = relay

        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Front)
        print("ready", flush=True)
        server.serve_forever()
        """#
}
