import PGClient

extension EmbeddedPostgres {
    /// Client connections to the server other than the one asking (coordinators, job commands,
    /// `tessera transcode`), from `pg_stat_activity`.
    public func connectedClients() throws(StoreError) -> Int {
        do {
            let connection = try PGConnection(conninfo: url(database: "postgres"), reconnectTimeout: 0)
            defer { connection.close() }
            let rows = try connection.query("""
                SELECT count(*) AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
                """)
            return rows.first?.int("n") ?? 0
        } catch {
            throw StoreError(error, "cannot list the job store's clients")
        }
    }
}
