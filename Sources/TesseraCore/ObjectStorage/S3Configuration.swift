/// Credentials, region and endpoint for S3, resolved from the environment and the AWS files the way AWS's own
/// tools resolve them. Holds a secret: never log it, store it, or put it in an event (its description redacts).
public struct S3Configuration: Sendable, Equatable {
    public var credentials: AWSCredentials
    public var region: String
    public var endpoint: S3Endpoint

    public init(credentials: AWSCredentials, region: String, endpoint: S3Endpoint) {
        self.credentials = credentials
        self.region = region
        self.endpoint = endpoint
    }

    public var signer: SigV4Signer { SigV4Signer(credentials: credentials, region: region) }
}

/// Why no S3 configuration could be resolved. Messages name the variable or file, never a secret.
public struct S3ConfigurationError: Error, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case missingCredentials, incompleteCredentials, missingProfile, missingRegion, badEndpoint
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        public static let missingCredentials = Code(.missingCredentials)
        public static let incompleteCredentials = Code(.incompleteCredentials)
        public static let missingProfile = Code(.missingProfile)
        public static let missingRegion = Code(.missingRegion)
        public static let badEndpoint = Code(.badEndpoint)
        public var description: String { base.rawValue }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

extension S3Configuration {
    /// Resolves as the AWS CLI does. Credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with
    /// AWS_SESSION_TOKEN), else the profile (AWS_PROFILE, default `default`) in the credentials file
    /// (AWS_SHARED_CREDENTIALS_FILE, default ~/.aws/credentials), else in the config file (AWS_CONFIG_FILE,
    /// default ~/.aws/config). Region: AWS_REGION, AWS_DEFAULT_REGION, the profile's `region`. Endpoint:
    /// AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's `endpoint_url`, else AWS; a custom one is path style
    /// and needs no region (us-east-1 is signed, as S3-compatible stores expect). `readFile` returns nil when absent.
    public static func resolve(environment: [String: String], readFile: (String) -> String?) throws(S3ConfigurationError) -> S3Configuration {
        func env(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let home = env("HOME") ?? "/root"
        let profileName = env("AWS_PROFILE") ?? "default"
        let credentialsPath = env("AWS_SHARED_CREDENTIALS_FILE") ?? "\(home)/.aws/credentials"
        let configPath = env("AWS_CONFIG_FILE") ?? "\(home)/.aws/config"
        let credentialsFile = readFile(credentialsPath).map(AWSConfigFile.init(parsing:))
        let configFile = readFile(configPath).map(AWSConfigFile.init(parsing:))
        let profile = configFile?.configProfile(profileName) ?? [:]
        let profileCredentials = credentialsFile?.credentialsProfile(profileName)
        if env("AWS_PROFILE") != nil, profileCredentials == nil, configFile?.configProfile(profileName) == nil {
            throw S3ConfigurationError(.missingProfile, "AWS profile '\(profileName)' (AWS_PROFILE) is in neither \(credentialsPath) nor \(configPath)")
        }

        let credentials: AWSCredentials
        switch (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) {
        case let (id?, secret?):
            credentials = AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: env("AWS_SESSION_TOKEN"))
        case (.some, nil), (nil, .some):
            throw S3ConfigurationError(.incompleteCredentials, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together")
        case (nil, nil):
            let source = profileCredentials?["aws_access_key_id"] != nil ? profileCredentials! : profile
            guard let id = source["aws_access_key_id"], let secret = source["aws_secret_access_key"], !id.isEmpty, !secret.isEmpty else {
                throw S3ConfigurationError(.missingCredentials, "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                    + "or give profile '\(profileName)' aws_access_key_id and aws_secret_access_key in \(credentialsPath)")
            }
            credentials = AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: source["aws_session_token"])
        }

        let endpointURL = env("AWS_ENDPOINT_URL_S3") ?? env("AWS_ENDPOINT_URL") ?? profile["endpoint_url"]
        let custom: S3Endpoint?
        if let endpointURL {
            guard let parsed = S3Endpoint(url: endpointURL) else {
                throw S3ConfigurationError(.badEndpoint, "endpoint URL '\(endpointURL)' is not http(s)://host[:port]")
            }
            custom = parsed
        } else {
            custom = nil
        }
        guard let region = env("AWS_REGION") ?? env("AWS_DEFAULT_REGION") ?? profile["region"] ?? (custom != nil ? "us-east-1" : nil) else {
            throw S3ConfigurationError(.missingRegion, "no AWS region: set AWS_REGION or give profile '\(profileName)' a region in \(configPath)")
        }
        return S3Configuration(credentials: credentials, region: region, endpoint: custom ?? .aws(region: region))
    }
}
