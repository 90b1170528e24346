import Foundation
import TesseraCore

/// S3 over libcurl: HEAD, ranged and ETag-pinned GET, PUT, multipart upload, presigned GETs. Requests block the
/// calling thread, so a client lives on one dedicated thread (an AVIOContext's reader, the stitch's writer) and is
/// not shared; make one per thread. Transient failures are retried per `retry`.
public final class S3Client {
    public let configuration: S3Configuration
    public let retry: S3RetryPolicy
    private let curl: CurlEasy
    /// Seconds slept between tries; tests shorten it.
    private let sleep: (Double) -> Void
    /// The tries the last request took: after more than one, an earlier try may have done its work unseen.
    public private(set) var lastTries = 0

    public init(configuration: S3Configuration, retry: S3RetryPolicy = .standard,
                sleep: @escaping (Double) -> Void = { Thread.sleep(forTimeInterval: $0) }) throws(S3Error) {
        self.configuration = configuration
        self.retry = retry
        self.sleep = sleep
        do { curl = try CurlEasy() } catch {
            throw S3Error(.transport, object: "s3://", detail: error.description)
        }
    }

    // MARK: Objects

    public func head(_ location: S3Location) throws(S3Error) -> S3ObjectInfo {
        let response: HTTPResponse
        do {
            response = try send("HEAD", location)
        } catch where error.code == .notFound {
            // A HEAD has no body to say which is missing: ask the bucket.
            if let bucketError = bucketMissing(location) { throw bucketError }
            throw error
        } catch where error.code == .accessDenied {
            if let reason = refusalReason(location) { throw reason }
            throw error
        }
        guard let length = response.headers["content-length"].flatMap(Int64.init), let etag = response.headers["etag"] else {
            throw S3Error(.invalidResponse, object: location.description, detail: "HEAD gave no Content-Length or ETag")
        }
        return S3ObjectInfo(size: length, etag: etag)
    }

    /// Bytes `range` of the object; with `ifMatch`, only while the object still has that ETag.
    public func get(_ location: S3Location, range: Range<Int64>, ifMatch etag: String? = nil) throws(S3Error) -> [UInt8] {
        guard !range.isEmpty else { return [] }
        var headers = [(name: "Range", value: "bytes=\(range.lowerBound)-\(range.upperBound - 1)")]
        if let etag { headers.append(("If-Match", etag)) }
        let response = try send("GET", location, headers: headers)
        guard response.body.count == range.count || (response.status == 206 && response.body.count < range.count) else {
            throw S3Error(.invalidResponse, object: location.description,
                          detail: "asked for \(range.count) bytes at \(range.lowerBound), got \(response.body.count) (HTTP \(response.status))")
        }
        return response.body
    }

    @discardableResult
    public func put(_ location: S3Location, body: [UInt8]) throws(S3Error) -> String {
        let response = try send("PUT", location, body: body)
        return response.headers["etag"] ?? ""
    }

    public func delete(_ location: S3Location) throws(S3Error) {
        _ = try send("DELETE", location)
    }

    /// Whether the bucket is there for these credentials; a missing one throws `.noSuchBucket`.
    public func headBucket(_ bucket: String) throws(S3Error) {
        do {
            _ = try send("HEAD", bucket: bucket)
        } catch where error.code == .notFound {
            throw S3Error(.noSuchBucket, object: "s3://\(bucket)", detail: "the bucket '\(bucket)' does not exist", status: 404)
        }
    }

    public func createBucket(_ bucket: String) throws(S3Error) {
        _ = try send("PUT", bucket: bucket)
    }

    // MARK: Multipart

    public func createMultipartUpload(_ location: S3Location) throws(S3Error) -> String {
        let response = try send("POST", location, query: [("uploads", "")])
        guard let id = S3XML(response.body).first("UploadId") else {
            throw S3Error(.invalidResponse, object: location.description, detail: "CreateMultipartUpload gave no UploadId")
        }
        return id
    }

    public func uploadPart(_ location: S3Location, uploadID: String, number: Int, body: [UInt8]) throws(S3Error) -> String {
        let response = try send("PUT", location, query: [("partNumber", String(number)), ("uploadId", uploadID)], body: body)
        guard let etag = response.headers["etag"] else {
            throw S3Error(.invalidResponse, object: location.description, detail: "UploadPart \(number) gave no ETag")
        }
        return etag
    }

    public func completeMultipartUpload(_ location: S3Location, uploadID: String, parts: [(number: Int, etag: String)]) throws(S3Error) {
        let xml = "<CompleteMultipartUpload>"
            + parts.map { "<Part><PartNumber>\($0.number)</PartNumber><ETag>\(S3XML.escape($0.etag))</ETag></Part>" }.joined()
            + "</CompleteMultipartUpload>"
        let response = try send("POST", location, query: [("uploadId", uploadID)], body: Array(xml.utf8))
        // S3 may answer 200 and report the failure in the body.
        if S3XML(response.body).first("Code") != nil {
            throw S3Error.classify(HTTPResponse(status: 500, headers: response.headers, body: response.body),
                                   object: location.description, region: configuration.region)
        }
    }

    public func abortMultipartUpload(_ location: S3Location, uploadID: String) throws(S3Error) {
        _ = try send("DELETE", location, query: [("uploadId", uploadID)])
    }

    public func listMultipartUploads(bucket: String, prefix: String = "") throws(S3Error) -> [S3PendingUpload] {
        let response = try send("GET", bucket: bucket, query: [("uploads", ""), ("prefix", prefix)])
        return S3XML(response.body).all("Upload").map { block in
            let upload = S3XML(text: block)
            return S3PendingUpload(key: upload.first("Key") ?? "", uploadID: upload.first("UploadId") ?? "")
        }
    }

    // MARK: Presigning

    /// A URL anyone may GET for `expires` seconds without credentials (a worker fetching its segment's bytes).
    public func presignedGET(_ location: S3Location, expires: Int, now: Int64 = Int64(Date().timeIntervalSince1970)) -> String {
        let (host, path) = configuration.endpoint.address(bucket: location.bucket, key: location.key)
        let request = SigV4Request(method: "GET", host: host, path: path)
        let query = configuration.signer.presignedQuery(request, at: SigV4Timestamp(unixSeconds: now), expires: expires)
        return "\(configuration.endpoint.scheme)://\(host)\(request.encodedPath)?\(query)"
    }

    // MARK: Sending

    private func send(_ method: String, _ location: S3Location, query: [(name: String, value: String)] = [],
                      headers: [(name: String, value: String)] = [], body: [UInt8] = []) throws(S3Error) -> HTTPResponse {
        let (host, path) = configuration.endpoint.address(bucket: location.bucket, key: location.key)
        return try send(SigV4Request(method: method, host: host, path: path, query: query, headers: headers,
                                     payloadHash: SigV4Hash.hexHash(body)), body: body, object: location.description)
    }

    private func send(_ method: String, bucket: String, query: [(name: String, value: String)] = []) throws(S3Error) -> HTTPResponse {
        let (host, path) = configuration.endpoint.address(bucket: bucket, key: "")
        return try send(SigV4Request(method: method, host: host, path: path, query: query), body: [], object: "s3://\(bucket)")
    }

    /// Signs afresh for each try (the time moves on) and retries what is transient.
    private func send(_ request: SigV4Request, body: [UInt8], object: String) throws(S3Error) -> HTTPResponse {
        let query = request.canonicalQuery
        let url = "\(configuration.endpoint.scheme)://\(request.host)\(request.encodedPath)" + (query.isEmpty ? "" : "?\(query)")
        return try retry.run(object: object, region: configuration.region, sleep: sleep, curl: curl, tries: &lastTries) {
            let headers = configuration.signer.sign(request, at: SigV4Timestamp(unixSeconds: Int64(Date().timeIntervalSince1970)))
            return HTTPRequest(method: request.method, url: url, headers: headers, body: body)
        }
    }

    /// Why a HEAD was refused, which its empty body cannot say (a wrong secret, expired keys): a one-byte GET's
    /// answer; nil when that says no more than "access denied".
    private func refusalReason(_ location: S3Location) -> S3Error? {
        do {
            _ = try get(location, range: 0..<1)
            return nil
        } catch {
            return error.code == .accessDenied ? nil : error
        }
    }

    private func bucketMissing(_ location: S3Location) -> S3Error? {
        do {
            try headBucket(location.bucket)
            return nil
        } catch where error.code == .noSuchBucket {
            return S3Error(.noSuchBucket, object: location.description, detail: "the bucket '\(location.bucket)' does not exist", status: 404)
        } catch {
            return nil
        }
    }
}
