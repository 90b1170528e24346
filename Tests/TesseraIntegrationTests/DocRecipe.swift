import Foundation
import TesseraTestSupport

/// The shell blocks of a Markdown document that form a recipe, in the document's order. Each is a ```sh
/// block right after a comment `<!-- recipe: HOSTS -->` (HOSTS: names separated by spaces, or `every host`),
/// or `<!-- recipe: HOSTS, runs until stopped -->` for a block that starts a long-running process; another
/// recipe of the document has a marker of its own (`<!-- systemd recipe: HOSTS -->`).
struct DocRecipe {
    struct Block {
        /// The hosts it runs on, in order; empty for every host.
        var hosts: [String]
        /// Starts a process that runs until it is stopped (a coordinator, a worker).
        var runsUntilStopped: Bool
        var text: String
        /// The line of its marker in the document, for messages.
        var line: Int

        var everyHost: Bool { hosts.isEmpty }
    }

    static let untilStopped = ", runs until stopped"

    var blocks: [Block]

    init(blocks: [Block]) { self.blocks = blocks }

    /// The hosts the blocks name, in the order they first appear.
    var hosts: [String] {
        var seen: [String] = []
        for host in blocks.flatMap(\.hosts) where !seen.contains(host) { seen.append(host) }
        return seen
    }

    init(markdown: String, marker: String = "<!-- recipe: ") throws {
        let lines = markdown.components(separatedBy: "\n")
        blocks = []
        var index = 0
        while index < lines.count {
            defer { index += 1 }
            let line = lines[index].trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix(marker), line.hasSuffix("-->") else { continue }
            var spec = line.dropFirst(marker.count).dropLast(3).trimmingCharacters(in: .whitespaces)
            let runsUntilStopped = spec.hasSuffix(Self.untilStopped)
            if runsUntilStopped { spec = String(spec.dropLast(Self.untilStopped.count)) }
            let hosts = spec == "every host" ? [] : spec.split(separator: " ").map(String.init)
            guard spec == "every host" || !hosts.isEmpty else { throw ToolError("line \(index + 1): a recipe marker names no host") }
            var open = index + 1
            while open < lines.count && lines[open].trimmingCharacters(in: .whitespaces).isEmpty { open += 1 }
            guard open < lines.count, lines[open] == "```sh" else { throw ToolError("line \(index + 1): a recipe marker not followed by a ```sh block") }
            guard let close = lines[(open + 1)...].firstIndex(of: "```") else { throw ToolError("line \(open + 1): a recipe block not closed") }
            let text = lines[(open + 1)..<close].joined(separator: "\n") + "\n"
            blocks.append(Block(hosts: hosts, runsUntilStopped: runsUntilStopped, text: text, line: index + 1))
            index = close
        }
    }
}
