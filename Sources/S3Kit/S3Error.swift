/// A failed S3 operation, in one line naming the object: what S3 said (its status and error code) turned into
/// what the user can act on. Carries no credential and no presigned URL.
public struct S3Error: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case notFound, noSuchBucket, accessDenied, credentialsRefused, expiredCredentials, wrongRegion, objectChanged
            case throttled, serverError, transport, invalidResponse, tooManyParts, configuration, noSuchUpload
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// No object at the key.
        public static let notFound = Code(.notFound)
        public static let noSuchBucket = Code(.noSuchBucket)
        /// The credentials are valid but may not do this (a bucket that refuses writes).
        public static let accessDenied = Code(.accessDenied)
        /// Unknown access key or a signature S3 computes differently (a wrong secret).
        public static let credentialsRefused = Code(.credentialsRefused)
        public static let expiredCredentials = Code(.expiredCredentials)
        public static let wrongRegion = Code(.wrongRegion)
        /// The ETag pinned at the start no longer matches: the object was replaced.
        public static let objectChanged = Code(.objectChanged)
        /// SlowDown (503) after every retry.
        public static let throttled = Code(.throttled)
        /// 5xx after every retry.
        public static let serverError = Code(.serverError)
        /// The connection failed or dropped after every retry.
        public static let transport = Code(.transport)
        public static let invalidResponse = Code(.invalidResponse)
        /// More than S3's 10,000 parts.
        public static let tooManyParts = Code(.tooManyParts)
        /// The multipart upload is gone: completed or aborted (perhaps by an earlier try whose answer was lost).
        public static let noSuchUpload = Code(.noSuchUpload)
        public static let configuration = Code(.configuration)
        public var description: String { base.rawValue }
    }

    public let code: Code
    /// `s3://bucket/key`, or `s3://bucket` for a bucket operation.
    public let object: String
    public let detail: String
    public let status: Int?

    public init(_ code: Code, object: String, detail: String, status: Int? = nil) {
        self.code = code
        self.object = object
        self.detail = detail
        self.status = status
    }

    /// Worth another try after a back-off.
    public var isRetryable: Bool { [.throttled, .serverError, .transport].contains(code) }

    public var description: String {
        "\(object): \(detail)".split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}

extension S3Error {
    /// Classifies an error response. S3's XML <Code> decides where there is one; a HEAD has no body, so its
    /// status and the x-amz-bucket-region header decide.
    static func classify(_ response: HTTPResponse, object: String, region: String) -> S3Error {
        let xml = S3XML(response.body)
        let s3Code = xml.first("Code")
        let said = [s3Code, xml.first("Message")].compactMap { $0 }.joined(separator: ": ")
        let suffix = said.isEmpty ? " (HTTP \(response.status))" : " (HTTP \(response.status) \(said))"
        func make(_ code: Code, _ detail: String) -> S3Error { S3Error(code, object: object, detail: detail + suffix, status: response.status) }
        let bucketRegion = response.headers["x-amz-bucket-region"] ?? xml.first("Region")
        switch (response.status, s3Code) {
        case (_, "NoSuchBucket"): return make(.noSuchBucket, "the bucket does not exist")
        case (_, "NoSuchKey"), (404, nil): return make(.notFound, "no such object")
        case (_, "NoSuchUpload"): return make(.noSuchUpload, "no such multipart upload (completed or aborted)")
        case (_, "ExpiredToken"), (_, "TokenRefreshRequired"), (_, "RequestExpired"):
            return make(.expiredCredentials, "the AWS credentials have expired; renew AWS_SESSION_TOKEN or the profile's keys")
        case (_, "InvalidAccessKeyId"), (_, "SignatureDoesNotMatch"), (_, "InvalidToken"):
            return make(.credentialsRefused, "S3 refused the credentials (unknown access key or wrong secret)")
        case (_, "AuthorizationHeaderMalformed"), (_, "PermanentRedirect"), (_, "IllegalLocationConstraintException"), (301, _):
            let hint = bucketRegion.map { "; the bucket is in \($0)" } ?? ""
            return make(.wrongRegion, "wrong region: signed for \(region)\(hint); set AWS_REGION")
        case (403, _) where bucketRegion != nil && bucketRegion != region && s3Code == nil:
            return make(.wrongRegion, "wrong region: signed for \(region); the bucket is in \(bucketRegion!); set AWS_REGION")
        case (403, _): return make(.accessDenied, "access denied")
        case (412, _): return make(.objectChanged, "the object changed since the job began (its ETag no longer matches)")
        case (_, "SlowDown"), (429, _): return make(.throttled, "S3 asked to slow down")
        case (500..., _): return make(.serverError, "S3 server error")
        default: return make(.invalidResponse, "unexpected answer")
        }
    }
}
