import Testing
@testable import TesseraCore

/// Credentials, region and endpoint resolved as AWS's tools resolve them, from variables and the two AWS files.
@Suite struct S3ConfigurationTests {
    static let home = "/home/u"

    static func resolve(_ environment: [String: String], files: [String: String] = [:]) throws(S3ConfigurationError) -> S3Configuration {
        try S3Configuration.resolve(environment: ["HOME": home].merging(environment) { $1 }, readFile: { files[$0] })
    }

    static func code(_ environment: [String: String], files: [String: String] = [:]) -> S3ConfigurationError.Code? {
        do { _ = try resolve(environment, files: files); return nil } catch { return error.code }
    }

    @Test func environmentVariablesWinOverFiles() throws {
        let config = try Self.resolve(
            ["AWS_ACCESS_KEY_ID": "AKENV", "AWS_SECRET_ACCESS_KEY": "envsecret", "AWS_SESSION_TOKEN": "tok", "AWS_REGION": "eu-west-1",
             "AWS_DEFAULT_REGION": "us-west-2"],
            files: ["\(Self.home)/.aws/credentials": "[default]\naws_access_key_id = AKFILE\naws_secret_access_key = filesecret\n"])
        #expect(config.credentials == AWSCredentials(accessKeyID: "AKENV", secretAccessKey: "envsecret", sessionToken: "tok"))
        #expect(config.region == "eu-west-1")
        #expect(config.endpoint == .aws(region: "eu-west-1"))
        #expect(config.endpoint.address(bucket: "b", key: "in.mov") == ("b.s3.eu-west-1.amazonaws.com", "/in.mov"))
    }

    @Test func profileFromCredentialsAndConfigFiles() throws {
        let files = [
            "\(Self.home)/.aws/credentials": """
                [default]
                aws_access_key_id = AKDEFAULT
                aws_secret_access_key = d
                # the render farm
                [farm]
                aws_access_key_id=AKFARM
                aws_secret_access_key = farmsecret
                """,
            "\(Self.home)/.aws/config": """
                [default]
                region = us-east-2
                [profile farm]
                region = ap-south-1
                endpoint_url = http://10.0.0.5:9000/
                s3 =
                  addressing_style = path
                """,
        ]
        let farm = try Self.resolve(["AWS_PROFILE": "farm"], files: files)
        #expect(farm.credentials == AWSCredentials(accessKeyID: "AKFARM", secretAccessKey: "farmsecret"))
        #expect(farm.region == "ap-south-1")
        #expect(farm.endpoint == S3Endpoint(scheme: "http", authority: "10.0.0.5:9000", pathStyle: true))
        #expect(farm.endpoint.address(bucket: "b", key: "t/master.m3u8") == ("10.0.0.5:9000", "/b/t/master.m3u8"))
        let standard = try Self.resolve(["AWS_DEFAULT_REGION": "us-west-1"], files: files)
        #expect(standard.credentials.accessKeyID == "AKDEFAULT")
        #expect(standard.region == "us-west-1")
    }

    @Test func credentialsInTheConfigFileAndCustomFilePaths() throws {
        let config = try Self.resolve(["AWS_CONFIG_FILE": "/etc/tessera/aws", "AWS_ENDPOINT_URL": "https://store.example:443"],
                                      files: ["/etc/tessera/aws": "[default]\naws_access_key_id = AKC\naws_secret_access_key = c\n"])
        #expect(config.credentials.accessKeyID == "AKC")
        #expect(config.region == "us-east-1")
        #expect(config.endpoint == S3Endpoint(scheme: "https", authority: "store.example", pathStyle: true))
    }

    @Test func theS3EndpointVariableWinsOverTheGeneralOne() throws {
        let config = try Self.resolve(["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "AWS_ENDPOINT_URL": "http://general:1",
                                       "AWS_ENDPOINT_URL_S3": "http://s3only:2"])
        #expect(config.endpoint.authority == "s3only:2")
    }

    @Test func eachMissingPieceHasItsOwnCode() {
        #expect(Self.code([:]) == .missingCredentials)
        #expect(Self.code(["AWS_ACCESS_KEY_ID": "a"]) == .incompleteCredentials)
        #expect(Self.code(["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"]) == .missingRegion)
        #expect(Self.code(["AWS_PROFILE": "nope", "AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "AWS_REGION": "r"]) == .missingProfile)
        #expect(Self.code(["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "AWS_ENDPOINT_URL": "ftp://x"]) == .badEndpoint)
    }

    @Test func errorsNeverCarryTheSecret() {
        do {
            _ = try Self.resolve(["AWS_SECRET_ACCESS_KEY": "topsecret"])
            Issue.record("resolved without a key id")
        } catch {
            #expect(!error.message.contains("topsecret"))
        }
    }

    @Test func s3URLsParse() {
        #expect(S3Location(url: "s3://bucket/dir/in.mov") == S3Location(bucket: "bucket", key: "dir/in.mov"))
        #expect(S3Location(url: "s3://bucket/") == nil)
        #expect(S3Location(url: "s3://bucket") == nil)
        #expect(S3Location(url: "/tmp/in.mov") == nil)
        #expect(S3Location(bucket: "b", key: "k").description == "s3://b/k")
        // Dotted buckets go path style even on AWS.
        #expect(S3Endpoint.aws(region: "us-east-1").address(bucket: "a.b", key: "k") == ("s3.us-east-1.amazonaws.com", "/a.b/k"))
    }
}
