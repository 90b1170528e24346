import PGClient
import TesseraMigrations

/// Applies the SQL migrations in order, once each. Concurrent starters are serialised with an advisory
/// lock held for the transaction, so two coordinators starting together apply each migration once.
public enum Migrator {
    /// Arbitrary, fixed: the advisory lock key for migrations.
    static let lockKey = "7402653109"

    /// Returns the versions it applied (empty when the schema was current).
    @discardableResult
    public static func migrate(_ connection: PGConnection) throws(StoreError) -> [Int] {
        let migrations: [Migrations.Migration]
        do { migrations = try Migrations.all() } catch { throw StoreError("cannot read the migrations: \(error)") }
        guard !migrations.isEmpty else { throw StoreError("no migrations are bundled with this build") }
        do {
            return try connection.transaction {
                try connection.query("SELECT pg_advisory_xact_lock($1::bigint)", [lockKey])
                try connection.query("""
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version integer PRIMARY KEY,
                        name text NOT NULL,
                        applied_at timestamptz NOT NULL DEFAULT now())
                    """)
                let done = Set(try connection.query("SELECT version FROM schema_migrations").all.compactMap { $0.int("version") })
                var applied: [Int] = []
                for m in migrations where !done.contains(m.version) {
                    try connection.executeScript(m.sql)
                    try connection.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [String(m.version), m.name])
                    applied.append(m.version)
                }
                return applied
            }
        } catch let error as PGError {
            throw StoreError(error, "migrating the database")
        } catch {
            throw StoreError("migrating the database: \(error)")
        }
    }

    /// The newest version the database has.
    public static func currentVersion(_ connection: PGConnection) throws(StoreError) -> Int? {
        do {
            let exists = try connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS present").first?.bool("present") ?? false
            guard exists else { return nil }
            return try connection.query("SELECT max(version) AS v FROM schema_migrations").first?.int("v")
        } catch {
            throw StoreError(error, "reading the schema version")
        }
    }
}
