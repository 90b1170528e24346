import Foundation
import Testing
import TesseraTestSupport

/// The commands in docker-compose.yml, deploy/systemd, deploy/kubernetes, the README and the docs are the
/// real CLI: every option they pass exists in that subcommand's help.
@Suite struct DeploymentFilesTests {
    @Test func everyOptionInTheDeploymentFilesExists() throws {
        let files = ["docker-compose.yml", "deploy/kubernetes/coordinator.yaml", "deploy/kubernetes/worker.yaml",
                     "deploy/systemd/tessera-coordinator.service", "deploy/systemd/tessera-worker@.service", "README.md",
                     "docs/cli.md", "docs/operations.md", "docs/security.md"]
        var checked = 0
        for file in files {
            let text = try String(contentsOf: Fixtures.repository.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                guard let sub = ["coordinator", "worker", "submit", "transcode", "events"].first(where: {
                    line.contains("tessera \($0) ") || line.contains("[\"\($0)\"") || line.contains("\"\($0)\",")
                }) else { continue }
                let flags = line.split(whereSeparator: { !($0.isLetter || $0 == "-") }).filter { $0.hasPrefix("--") && $0.count > 2 }
                guard !flags.isEmpty else { continue }
                let help = try Tool.run(Tool.tesseraBinary, [sub, "--help"]).text
                for flag in flags {
                    #expect(help.contains(String(flag)), "\(file): `tessera \(sub)` has no \(flag)")
                    checked += 1
                }
            }
        }
        #expect(checked >= 10)
    }
}
