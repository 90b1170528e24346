import Foundation
import S3Kit
import TesseraCore

/// A private moto S3 server (PyPI's `moto[server]`) on a port of its own, with authentication on: the first
/// unauthenticated actions create two IAM users (one may do anything in S3, one may only read), and every request
/// after that must carry a valid SigV4 signature from one of their keys, as S3 requires.
package final class MotoServer {
    package let port: Int
    package let admin: AWSCredentials
    package let reader: AWSCredentials
    private let process: Process
    /// In front of moto when presigned URLs must be checked (`init(authenticated:presigned:)`).
    private let front: PresignedFront?

    /// The IAM set-up, run through boto3 (installed with moto) while moto still admits unauthenticated actions.
    private static let setup = """
        import boto3, json, sys, time, urllib.request
        url = sys.argv[1]
        for _ in range(200):
            try:
                urllib.request.urlopen(url + "/moto-api/", timeout=1); break
            except Exception:
                time.sleep(0.05)
        iam = boto3.client("iam", endpoint_url=url, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
        def user(name, actions):
            iam.create_user(UserName=name)
            iam.put_user_policy(UserName=name, PolicyName="s3", PolicyDocument=json.dumps({"Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}))
            key = iam.create_access_key(UserName=name)["AccessKey"]
            return [key["AccessKeyId"], key["SecretAccessKey"]]
        print(json.dumps({"admin": user("tessera", ["s3:*"]), "reader": user("reader", ["s3:Get*", "s3:List*"])}))
        """

    /// `authenticated: false` leaves moto open. moto's authentication answers every presigned URL with 500 (it
    /// looks for an Authorization header), boto3's as Tessera's: `presigned: true` puts a `PresignedFront` before
    /// it, which checks presigned URLs as S3 does, and `endpoint` is the front's. `faults`: that share of requests
    /// fails at the front, as a flaky store fails them (`PresignedFront`).
    package init(authenticated: Bool = true, presigned: Bool = false, faults: Double = 0) throws {
        var lastError: (any Error)?
        var started: (Int, Process, AWSCredentials, AWSCredentials)?
        for _ in 0..<5 where started == nil {
            let port = Int.random(in: 20_000..<60_000)
            do {
                let (process, admin, reader) = try Self.start(port: port, authenticated: authenticated)
                started = (port, process, admin, reader)
            } catch {
                lastError = error
            }
        }
        guard let started else { throw lastError! }
        (port, process, admin, reader) = started
        do {
            front = presigned || faults > 0
                ? try PresignedFront(upstream: port, keys: [admin, reader].map { PresignedFront.AWSKeyPair($0.accessKeyID, $0.secretAccessKey) }, faults: faults)
                : nil
        } catch {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw error
        }
    }

    private static func start(port: Int, authenticated: Bool) throws -> (Process, AWSCredentials, AWSCredentials) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["moto_server", "-H", "127.0.0.1", "-p", String(port)]
        var environment = ProcessInfo.processInfo.environment
        if authenticated { environment["INITIAL_NO_AUTH_ACTION_COUNT"] = "6" }
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let setup = Process()
        setup.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        setup.arguments = ["python3", "-c", Self.setup, "http://127.0.0.1:\(port)"]
        let pipe = Pipe()
        setup.standardOutput = pipe
        setup.standardError = FileHandle.nullDevice
        try setup.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        setup.waitUntilExit()
        struct Keys: Decodable { let admin: [String]; let reader: [String] }
        guard setup.terminationStatus == 0, process.isRunning, let keys = try? JSONDecoder().decode(Keys.self, from: output) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "moto_server did not start on port \(port)"])
        }
        return (process, AWSCredentials(accessKeyID: keys.admin[0], secretAccessKey: keys.admin[1]),
                AWSCredentials(accessKeyID: keys.reader[0], secretAccessKey: keys.reader[1]))
    }

    /// SIGKILL: moto's server catches SIGTERM and keeps serving.
    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    package var endpoint: String { "http://127.0.0.1:\(front?.port ?? port)" }

    /// A configuration as `tessera` resolves it from the environment: these keys, this endpoint.
    package func configuration(_ credentials: AWSCredentials? = nil, region: String = "us-east-1") throws -> S3Configuration {
        let keys = credentials ?? admin
        return try S3Configuration.resolve(
            environment: ["AWS_ACCESS_KEY_ID": keys.accessKeyID, "AWS_SECRET_ACCESS_KEY": keys.secretAccessKey,
                          "AWS_REGION": region, "AWS_ENDPOINT_URL_S3": endpoint],
            readFile: { _ in nil })
    }

    /// The environment a `tessera` process reads these keys and this endpoint from.
    package func environment(_ credentials: AWSCredentials? = nil) -> [String: String] {
        let keys = credentials ?? admin
        return ["AWS_ACCESS_KEY_ID": keys.accessKeyID, "AWS_SECRET_ACCESS_KEY": keys.secretAccessKey,
                "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL_S3": endpoint]
    }

    package func client(_ credentials: AWSCredentials? = nil, retry: S3RetryPolicy = .standard) throws -> S3Client {
        try S3Client(configuration: configuration(credentials), retry: retry, sleep: { _ in })
    }

    /// An administrator's client, with the bucket `name` made.
    package func client(creatingBucket name: String) throws -> S3Client {
        let client = try client()
        try client.createBucket(name)
        return client
    }
}
