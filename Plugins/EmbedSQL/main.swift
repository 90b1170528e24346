import Foundation

// tessera-embed-sql OUTPUT.swift NNNN_name.sql...: writes `Migrations.embedded`, one entry per file, the SQL
// as an escaped string literal. Refuses a name without a version and two files with one version.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("tessera-embed-sql: \(message)\n".utf8))
    exit(1)
}

/// `text` as a Swift string literal: quotes, backslashes and control characters escaped.
func literal(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": out += "\\\\"
        case "\"": out += "\\\""
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += "\\u{\(String(scalar.value, radix: 16))}"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first else { fail("usage: tessera-embed-sql OUTPUT.swift FILE.sql...") }
var entries: [(version: Int, name: String, sql: String)] = []
for path in arguments.dropFirst() {
    let file = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
    guard let underscore = file.firstIndex(of: "_"), let version = Int(file[..<underscore]), version > 0 else {
        fail("\(path): a migration is named NNNN_name.sql")
    }
    if let other = entries.first(where: { $0.version == version }) { fail("\(path): version \(version) is also \(other.name)") }
    guard let sql = try? String(contentsOfFile: path, encoding: .utf8) else { fail("\(path): cannot read it as UTF-8") }
    entries.append((version, String(file[file.index(after: underscore)...]), sql))
}
entries.sort { $0.version < $1.version }
var source = "// Generated from migrations/*.sql by the EmbedMigrations plugin.\n\nextension Migrations {\n    static let embedded: [Migration] = [\n"
for entry in entries {
    source += "        Migration(version: \(entry.version), name: \(literal(entry.name)), sql: \(literal(entry.sql))),\n"
}
source += "    ]\n}\n"
do {
    // Unchanged output keeps its timestamp: nothing downstream rebuilds.
    if (try? String(contentsOfFile: output, encoding: .utf8)) != source { try source.write(toFile: output, atomically: true, encoding: .utf8) }
} catch {
    fail("\(output): \(error)")
}
