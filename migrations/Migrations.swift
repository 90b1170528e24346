/// The SQL migrations shipped with Tessera, in order. Each file in this folder is `NNNN_name.sql`,
/// forward-only; the EmbedMigrations plugin compiles every one of them into `embedded` at build time.
public enum Migrations {
    public struct Migration: Sendable {
        public let version: Int
        public let name: String
        public let sql: String
    }

    /// Every migration, by version. (Throws nothing since the SQL is compiled in; kept `throws` for callers.)
    public static func all() throws -> [Migration] { embedded }
}
