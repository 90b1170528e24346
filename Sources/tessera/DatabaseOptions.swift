import ArgumentParser
import Foundation
import TesseraStore

/// Where the job store is: `--database-url`, else `TESSERA_DATABASE_URL`, else the embedded server in
/// `--data-dir` (default: the state directory), started on first use.
struct DatabaseOptions: ParsableArguments {
    @Option(help: "PostgreSQL connection URL (default: $TESSERA_DATABASE_URL, else the embedded server).")
    var databaseURL: String?

    @Option(help: "Directory of the embedded PostgreSQL (default: $TESSERA_DATA_DIR, else $XDG_STATE_HOME/tessera, else ~/.local/state/tessera; /var/lib/tessera as root).")
    var dataDir: String?

    var embedded: EmbeddedPostgres {
        EmbeddedPostgres(directory: dataDir.map { URL(fileURLWithPath: $0) } ?? EmbeddedPostgres.defaultDirectory())
    }

    var explicitURL: String? {
        if let databaseURL { return databaseURL }
        if let env = ProcessInfo.processInfo.environment["TESSERA_DATABASE_URL"], !env.isEmpty { return env }
        return nil
    }

    /// Whether a data directory was named (`--data-dir` or `TESSERA_DATA_DIR`) rather than defaulted.
    var namesDataDir: Bool {
        dataDir != nil || !(ProcessInfo.processInfo.environment["TESSERA_DATA_DIR"] ?? "").isEmpty
    }

    /// The embedded store a `db` command may act on: refused when a database URL names the job store and no
    /// data directory names an embedded one, so that `db stop` never stops a store other commands do not use.
    func embeddedOnly(_ command: String) throws(StoreError) -> EmbeddedPostgres {
        guard explicitURL == nil || namesDataDir else {
            throw StoreError("db \(command) manages the embedded store only, and a database URL (--database-url or TESSERA_DATABASE_URL) names the job store: unset it, or name the embedded store with --data-dir")
        }
        return embedded
    }

    /// The URL with its password hidden, to show.
    static func redacted(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].firstIndex(of: "@") else { return url }
        let credentials = url[scheme.upperBound..<at]
        guard let colon = credentials.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }

    /// The store's URL, starting the embedded server when that is the store; `announcing` says where when
    /// it creates it (commands that only read leave it unsaid, their errors one line).
    func resolveURL(announcing: Bool = false) throws(StoreError) -> String {
        if let url = explicitURL { return url }
        if announcing { announceNewStore() }
        try embedded.start()
        return embedded.url
    }

    /// Says once, when the embedded store is about to be created, where it will be.
    func announceNewStore() {
        guard explicitURL == nil, !embedded.isInitialised else { return }
        FileHandle.standardError.write(Data("tessera: creating the job store in \(embedded.directory.path) (tessera db stop stops its server)\n".utf8))
    }

    /// Connects (starting the embedded server if that is the store) and brings the schema up to date.
    func open(announcing: Bool = false) throws(StoreError) -> JobStore {
        try JobStore(url: try resolveURL(announcing: announcing), migrate: true, reconnectTimeout: 5)
    }
}
