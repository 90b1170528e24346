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
