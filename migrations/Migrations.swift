import Foundation

/// The SQL migrations shipped with Tessera, in order. Each file in this folder is `NNNN_name.sql`,
/// forward-only, and listed as a resource in Package.swift.
public enum Migrations {
    public struct Migration: Sendable {
        public let version: Int
        public let name: String
        public let sql: String
    }

    public static func all() throws -> [Migration] {
        guard let directory = Bundle.module.resourceURL else { return [] }
        let urls = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
        return try urls.compactMap { url -> Migration? in
            let file = url.deletingPathExtension().lastPathComponent
            guard let underscore = file.firstIndex(of: "_"), let version = Int(file[..<underscore]) else { return nil }
            return Migration(version: version, name: String(file[file.index(after: underscore)...]),
                             sql: try String(contentsOf: url, encoding: .utf8))
        }
        .sorted { $0.version < $1.version }
    }
}
