import ArgumentParser
import Foundation
import TesseraCluster

/// The CURVE options of `coordinator` and `worker`: each flag, else its environment variable (container
/// secrets), else none. A `tcp://` endpoint needs keys unless `--insecure` says plaintext is meant.
protocol KeyOptions {
    var key: String? { get }
    var insecure: Bool { get }
}

extension KeyOptions {
    static func environment(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    var keyFile: String? { key ?? Self.environment("TESSERA_KEY") }

    /// Whether plaintext is allowed on `endpoint`: anything but `tcp://`, or when asked for.
    func plaintextAllowed(_ endpoint: String) -> Bool {
        insecure || Self.environment("TESSERA_INSECURE") == "1" || !endpoint.hasPrefix("tcp://")
    }
}

struct CoordinatorKeyOptions: ParsableArguments, KeyOptions {
    @Option(help: "The coordinator's secret key file, written by `tessera keygen` (default: $TESSERA_KEY).")
    var key: String?

    @Option(help: "The workers' public keys it accepts, one per line, # comments (default: $TESSERA_AUTHORIZED_KEYS). Read again on SIGHUP and when it changes.")
    var authorizedKeys: String?

    @Flag(help: "Plaintext and no authentication on a tcp:// endpoint: any peer that reaches it may join (default: $TESSERA_INSECURE=1).")
    var insecure = false

    /// Keys for a coordinator bound to `endpoint`; nil: plaintext.
    func security(bind endpoint: String) throws -> CoordinatorSecurity? {
        guard let keyFile, let authorized = authorizedKeys ?? Self.environment("TESSERA_AUTHORIZED_KEYS") else {
            if plaintextAllowed(endpoint) { return nil }
            throw Tessera.fail(StartRefusal("coordinator: \(endpoint) needs --key and --authorized-keys (see `tessera keygen`), or --insecure for plaintext"))
        }
        do { return try CoordinatorSecurity(keyFile: keyFile, authorizedKeysPath: authorized) } catch { throw Tessera.fail(error) }
    }
}

struct WorkerKeyOptions: ParsableArguments, KeyOptions {
    @Option(help: "This worker's secret key file, written by `tessera keygen` (default: $TESSERA_KEY).")
    var key: String?

    @Option(help: "The coordinator's public key: its .pub file or the key itself (default: $TESSERA_COORDINATOR_KEY).")
    var coordinatorKey: String?

    @Flag(help: "Connect without encryption or keys, to a coordinator started with --insecure (default: $TESSERA_INSECURE=1).")
    var insecure = false

    /// Keys for a worker connecting to `endpoint`; nil: plaintext.
    func security(connect endpoint: String) throws -> WorkerSecurity? {
        guard let keyFile, let coordinator = coordinatorKey ?? Self.environment("TESSERA_COORDINATOR_KEY") else {
            if plaintextAllowed(endpoint) { return nil }
            throw Tessera.fail(StartRefusal("worker: \(endpoint) needs --key and --coordinator-key (see `tessera keygen`), or --insecure for a plaintext coordinator"))
        }
        do { return try WorkerSecurity(keyFile: keyFile, coordinatorKey: coordinator) } catch { throw Tessera.fail(error) }
    }
}

/// A one-line refusal to start.
struct StartRefusal: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
