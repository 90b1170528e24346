import Testing
@testable import TesseraCore

/// The hashes as wired (swift-crypto's) against FIPS 180-4 and RFC 4231, and the signer against the worked examples in AWS's S3
/// documentation ("Signature Calculations for the Authorization Header" and "Authenticating Requests: Using
/// Query Parameters"): same credentials, same time, same inputs, the published signatures.
@Suite struct SigV4SignerTests {
    static let signer = SigV4Signer(
        credentials: AWSCredentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1")
    /// 2013-05-24T00:00:00Z.
    static let time = SigV4Timestamp(unixSeconds: 1_369_353_600)
    static let host = "examplebucket.s3.amazonaws.com"

    @Test func sha256MatchesFIPSVectors() {
        #expect(SigV4Hash.hexHash([UInt8]()) == SigV4Request.emptyPayloadHash)
        #expect(SigV4Hash.hexHash(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SigV4Hash.hexHash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func hmacMatchesRFC4231() {
        #expect(HMACSHA256.authenticate("what do ya want for nothing?", key: Array("Jefe".utf8)).hexString
            == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // A key longer than the block is hashed first (test case 6).
        #expect(HMACSHA256.authenticate("Test Using Larger Than Block-Size Key - Hash Key First", key: [UInt8](repeating: 0xaa, count: 131)).hexString
            == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test func timestampFormatsUTC() {
        #expect(Self.time.amzDate == "20130524T000000Z")
        #expect(Self.time.day == "20130524")
        #expect(SigV4Timestamp(unixSeconds: 1_374_437_527).amzDate == "20130721T201207Z")
        #expect(SigV4Timestamp(unixSeconds: 951_782_400).amzDate == "20000229T000000Z")
    }

    static func authorization(_ headers: [(name: String, value: String)]) -> String? {
        headers.first { $0.name == "Authorization" }?.value
    }

    @Test func getObjectWithRange() {
        let request = SigV4Request(method: "GET", host: Self.host, path: "/test.txt", headers: [("Range", "bytes=0-9")])
        let headers = Self.signer.sign(request, at: Self.time)
        #expect(Self.authorization(headers) == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        // The intermediate values AWS publishes for this example.
        let canonical = SigV4Signer.canonicalHeaders([("Host", Self.host), ("Range", "bytes=0-9"),
                                                      ("x-amz-content-sha256", SigV4Request.emptyPayloadHash), ("x-amz-date", Self.time.amzDate)])
        let canonicalRequest = SigV4Signer.canonicalRequest(method: "GET", path: request.encodedPath, query: "", canonicalHeaders: canonical.text,
                                                            signedHeaders: canonical.signed, payloadHash: SigV4Request.emptyPayloadHash)
        #expect(SigV4Hash.hexHash(Array(canonicalRequest.utf8)) == "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972")
        #expect(headers.contains { $0.name == "x-amz-content-sha256" && $0.value == SigV4Request.emptyPayloadHash })
        #expect(!headers.contains { $0.name == "Host" })
    }

    /// A `$` in the key is percent-encoded once; a signed Date and storage class header join the list.
    @Test func putObject() {
        let body = Array("Welcome to Amazon S3.".utf8)
        #expect(SigV4Hash.hexHash(body) == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
        let request = SigV4Request(method: "PUT", host: Self.host, path: "/test$file.text",
                                   headers: [("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")],
                                   payloadHash: SigV4Hash.hexHash(body))
        #expect(request.encodedPath == "/test%24file.text")
        #expect(Self.authorization(Self.signer.sign(request, at: Self.time)) == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            + "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,"
            + "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
    }

    /// A query parameter without a value is signed as `lifecycle=`.
    @Test func getBucketLifecycleSignsEmptyValueAsKeyEquals() {
        let request = SigV4Request(method: "GET", host: Self.host, path: "/", query: [("lifecycle", "")])
        #expect(request.canonicalQuery == "lifecycle=")
        #expect(Self.authorization(Self.signer.sign(request, at: Self.time))?.hasSuffix(
            "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543") == true)
    }

    /// Parameters given out of order are signed sorted.
    @Test func listObjectsSortsTheQuery() {
        let request = SigV4Request(method: "GET", host: Self.host, path: "/", query: [("prefix", "J"), ("max-keys", "2")])
        #expect(request.canonicalQuery == "max-keys=2&prefix=J")
        #expect(Self.authorization(Self.signer.sign(request, at: Self.time))?.hasSuffix(
            "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7") == true)
    }

    @Test func presignedGet() {
        let query = Self.signer.presignedQuery(SigV4Request(method: "GET", host: Self.host, path: "/test.txt"), at: Self.time, expires: 86_400)
        #expect(query == "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
            + "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
            + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
    }

    @Test func encodingKeepsUnreservedAndEncodesTheRest() {
        #expect(SigV4Encoding.encode("a-b_c.d~e") == "a-b_c.d~e")
        #expect(SigV4Encoding.encode("a b/c+é") == "a%20b%2Fc%2B%C3%A9")
        #expect(SigV4Request(method: "GET", host: "h", path: "/b/dir/x y.mov").encodedPath == "/b/dir/x%20y.mov")
    }

    /// A session token is signed as a header, and its credentials never print their secret.
    @Test func sessionTokenIsSignedAndSecretsDoNotPrint() {
        var signer = Self.signer
        signer.credentials.sessionToken = "token/123"
        let headers = signer.sign(SigV4Request(method: "HEAD", host: Self.host, path: "/k"), at: Self.time)
        #expect(Self.authorization(headers)?.contains("x-amz-security-token") == true)
        #expect(!"\(signer.credentials)".contains("wJalr"))
        #expect(!String(reflecting: signer.credentials).contains("wJalr"))
    }
}
