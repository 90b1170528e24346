/// AWS Signature Version 4 for S3, built here rather than by the HTTP client (see docs/architecture.md): the
/// canonical request, the string to sign, the signing key, and either an Authorization header or a presigned URL.
/// `x-amz-content-sha256` is always signed, as S3 requires.
public struct SigV4Signer: Sendable {
    public var credentials: AWSCredentials
    public var region: String
    public var service: String

    public static let algorithm = "AWS4-HMAC-SHA256"

    public init(credentials: AWSCredentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The headers to send: the request's own, plus host, x-amz-date, x-amz-content-sha256, the session token
    /// when there is one, and Authorization.
    public func sign(_ request: SigV4Request, at time: SigV4Timestamp) -> [(name: String, value: String)] {
        var headers = request.headers
        headers.append(("Host", request.host))
        headers.append(("x-amz-content-sha256", request.payloadHash))
        headers.append(("x-amz-date", time.amzDate))
        if let token = credentials.sessionToken { headers.append(("x-amz-security-token", token)) }
        let canonical = Self.canonicalHeaders(headers)
        let canonicalRequest = Self.canonicalRequest(method: request.method, path: request.encodedPath, query: request.canonicalQuery,
                                                     canonicalHeaders: canonical.text, signedHeaders: canonical.signed,
                                                     payloadHash: request.payloadHash)
        let signature = self.signature(canonicalRequest: canonicalRequest, at: time)
        let authorization = "\(Self.algorithm) Credential=\(credentials.accessKeyID)/\(scope(time)),"
            + "SignedHeaders=\(canonical.signed),Signature=\(signature)"
        headers.append(("Authorization", authorization))
        return headers.filter { $0.name != "Host" }
    }

    /// A presigned URL's query (without `?`): the request's own parameters plus X-Amz-*, signed over the host
    /// header alone with an unsigned payload, valid for `expires` seconds (S3 allows at most 7 days).
    public func presignedQuery(_ request: SigV4Request, at time: SigV4Timestamp, expires: Int) -> String {
        var request = request
        request.query += [
            ("X-Amz-Algorithm", Self.algorithm),
            ("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope(time))"),
            ("X-Amz-Date", time.amzDate),
            ("X-Amz-Expires", String(min(max(expires, 1), 604_800))),
            ("X-Amz-SignedHeaders", "host"),
        ]
        if let token = credentials.sessionToken { request.query.append(("X-Amz-Security-Token", token)) }
        let canonical = Self.canonicalHeaders([("host", request.host)])
        let canonicalRequest = Self.canonicalRequest(method: request.method, path: request.encodedPath, query: request.canonicalQuery,
                                                     canonicalHeaders: canonical.text, signedHeaders: canonical.signed,
                                                     payloadHash: SigV4Request.unsignedPayload)
        return request.canonicalQuery + "&X-Amz-Signature=" + signature(canonicalRequest: canonicalRequest, at: time)
    }

    // MARK: The steps, public so tests can check each against AWS's worked examples.

    public static func canonicalRequest(method: String, path: String, query: String, canonicalHeaders: String,
                                        signedHeaders: String, payloadHash: String) -> String {
        [method, path, query, canonicalHeaders, signedHeaders, payloadHash].joined(separator: "\n")
    }

    /// Lower-case names sorted, values trimmed with inner runs of spaces collapsed; `text` ends with a newline.
    public static func canonicalHeaders(_ headers: [(name: String, value: String)]) -> (text: String, signed: String) {
        var merged: [String: [String]] = [:]
        for (name, value) in headers {
            let trimmed = value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            merged[name.lowercased(), default: []].append(trimmed)
        }
        let names = merged.keys.sorted()
        let text = names.map { "\($0):\(merged[$0]!.joined(separator: ","))\n" }.joined()
        return (text, names.joined(separator: ";"))
    }

    public func scope(_ time: SigV4Timestamp) -> String { "\(time.day)/\(region)/\(service)/aws4_request" }

    public func stringToSign(canonicalRequest: String, at time: SigV4Timestamp) -> String {
        [Self.algorithm, time.amzDate, scope(time), SigV4Hash.hexHash(Array(canonicalRequest.utf8))].joined(separator: "\n")
    }

    public func signingKey(at time: SigV4Timestamp) -> [UInt8] {
        let date = HMACSHA256.authenticate(time.day, key: Array("AWS4\(credentials.secretAccessKey)".utf8))
        let region = HMACSHA256.authenticate(self.region, key: date)
        let service = HMACSHA256.authenticate(self.service, key: region)
        return HMACSHA256.authenticate("aws4_request", key: service)
    }

    public func signature(canonicalRequest: String, at time: SigV4Timestamp) -> String {
        HMACSHA256.authenticate(stringToSign(canonicalRequest: canonicalRequest, at: time), key: signingKey(at: time)).hexString
    }
}
