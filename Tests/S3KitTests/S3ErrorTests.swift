import Testing
@testable import S3Kit

/// What each S3 answer becomes: one code per cause, so callers decide by code, and one line naming the object.
@Suite struct S3ErrorTests {
    static func classify(_ status: Int, _ xml: String? = nil, headers: [String: String] = [:]) -> S3Error {
        let body = xml.map { "<?xml version=\"1.0\"?><Error>\($0)</Error>" } ?? ""
        return S3Error.classify(HTTPResponse(status: status, headers: headers, body: Array(body.utf8)), object: "s3://b/k", region: "us-east-1")
    }

    @Test func eachCauseHasItsCode() {
        #expect(Self.classify(404, "<Code>NoSuchBucket</Code>").code == .noSuchBucket)
        #expect(Self.classify(404, "<Code>NoSuchKey</Code>").code == .notFound)
        #expect(Self.classify(404).code == .notFound)
        #expect(Self.classify(403, "<Code>AccessDenied</Code>").code == .accessDenied)
        #expect(Self.classify(403, "<Code>SignatureDoesNotMatch</Code>").code == .credentialsRefused)
        #expect(Self.classify(403, "<Code>InvalidAccessKeyId</Code>").code == .credentialsRefused)
        #expect(Self.classify(400, "<Code>ExpiredToken</Code>").code == .expiredCredentials)
        #expect(Self.classify(412, "<Code>PreconditionFailed</Code>").code == .objectChanged)
        #expect(Self.classify(503, "<Code>SlowDown</Code>").code == .throttled)
        #expect(Self.classify(500, "<Code>InternalError</Code>").code == .serverError)
        #expect(Self.classify(503).isRetryable)
        #expect(!Self.classify(403).isRetryable)
    }

    @Test func aWrongRegionNamesTheBucketsRegion() {
        let malformed = Self.classify(400, "<Code>AuthorizationHeaderMalformed</Code><Region>eu-central-1</Region>")
        #expect(malformed.code == .wrongRegion)
        #expect(malformed.description.contains("the bucket is in eu-central-1"))
        #expect(Self.classify(301, headers: ["x-amz-bucket-region": "ap-south-1"]).code == .wrongRegion)
        // A HEAD has no body: a 403 whose bucket sits in another region is a region error, not a refusal.
        #expect(Self.classify(403, headers: ["x-amz-bucket-region": "ap-south-1"]).code == .wrongRegion)
    }

    @Test func backOffGrowsWithJitterAndIsCapped() {
        let policy = S3RetryPolicy(attempts: 5, baseDelay: 0.5, maxDelay: 3)
        #expect(policy.delay(after: 1, random: 1) == 0.5)
        #expect(policy.delay(after: 3, random: 1) == 2)
        #expect(policy.delay(after: 4, random: 1) == 3)
        #expect(policy.delay(after: 4, random: 0.5) == 1.5)
        #expect(policy.delay(after: 2, random: 0) == 0)
    }

    @Test func partSizeKeepsLargeFilesWithinTenThousandParts() {
        #expect(S3MultipartUpload.partSize(expectedSize: nil) == 8 << 20)
        #expect(S3MultipartUpload.partSize(expectedSize: 1 << 30) == 8 << 20)
        let huge: Int64 = 200 << 30
        let size = S3MultipartUpload.partSize(expectedSize: huge)
        #expect(Int64(size) * 10_000 >= huge + huge / 2)
        #expect(size % (1 << 20) == 0)
    }
}
