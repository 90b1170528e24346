import Foundation
import PackagePlugin

/// Compiles the target's `NNNN_name.sql` files into one Swift source (`Migrations.embedded`), so the SQL
/// travels inside the executable. Every `.sql` file of the target is an input: a new migration is
/// picked up by the next build without editing the package.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let sql = target.sourceFiles.map(\.url).filter { $0.pathExtension == "sql" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("EmbeddedMigrations.swift")
        return [.buildCommand(displayName: "Embedding \(sql.count) SQL migrations",
                              executable: try context.tool(named: "tessera-embed-sql").url,
                              arguments: [output.path] + sql.map(\.path),
                              inputFiles: sql, outputFiles: [output])]
    }
}
