import Foundation
import TesseraCore

/// Reads byte ranges through presigned GET URLs: what a worker does with the URLs its task carries, holding no
/// credentials itself. Blocking, like `S3Client`: one reader per dedicated thread.
public final class S3PresignedReader {
    private let curl: CurlEasy
    private let retry: S3RetryPolicy
    private let sleep: (Double) -> Void

    public init(retry: S3RetryPolicy = .standard, sleep: @escaping (Double) -> Void = { Thread.sleep(forTimeInterval: $0) }) throws(S3Error) {
        self.retry = retry
        self.sleep = sleep
        do { curl = try CurlEasy() } catch { throw S3Error(.transport, object: "s3://", detail: error.description) }
    }

    /// Bytes `range` of the object behind `url`; `object` names it in errors (the URL itself holds a signature).
    public func get(_ url: String, range: Range<Int64>, ifMatch etag: String? = nil, object: String) throws(S3Error) -> [UInt8] {
        var headers = [(name: "Range", value: "bytes=\(range.lowerBound)-\(range.upperBound - 1)")]
        if let etag { headers.append(("If-Match", etag)) }
        var tries = 0
        let response = try retry.run(object: object, region: "", sleep: sleep, curl: curl, tries: &tries) {
            HTTPRequest(method: "GET", url: url, headers: headers)
        }
        return response.body
    }
}
