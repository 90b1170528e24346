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

    /// The keys `make` builds from the key file and `other` (the second file each side needs); nil when
    /// neither is given and plaintext is allowed on `endpoint`; a one-line refusal otherwise.
    func keys<Keys>(_ endpoint: String, other: String?, refusal: String,
                    _ make: (_ keyFile: String, _ other: String) throws(SecurityError) -> Keys) throws -> Keys? {
        guard let keyFile, let other else {
            if plaintextAllowed(endpoint) { return nil }
            throw Tessera.fail(StartRefusal(refusal))
        }
        do { return try make(keyFile, other) } catch { throw Tessera.fail(error) }
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
        try keys(endpoint, other: authorizedKeys ?? Self.environment("TESSERA_AUTHORIZED_KEYS"),
                 refusal: "coordinator: \(endpoint) needs --key and --authorized-keys (see `tessera keygen`), or --insecure for plaintext") {
            (keyFile, authorized) throws(SecurityError) in try CoordinatorSecurity(keyFile: keyFile, authorizedKeysPath: authorized)
        }
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
        try keys(endpoint, other: coordinatorKey ?? Self.environment("TESSERA_COORDINATOR_KEY"),
                 refusal: "worker: \(endpoint) needs --key and --coordinator-key (see `tessera keygen`), or --insecure for a plaintext coordinator") {
            (keyFile, coordinator) throws(SecurityError) in try WorkerSecurity(keyFile: keyFile, coordinatorKey: coordinator)
        }
    }
}

/// A one-line refusal to start.
struct StartRefusal: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
