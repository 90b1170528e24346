import ArgumentParser
import Foundation
import TesseraCluster

struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Write a CURVE key pair for a coordinator or a worker: NAME.key (secret, mode 0600) and NAME.pub.",
        discussion: """
            Give the coordinator its .key with --key, and each worker's .pub a line in the coordinator's \
            --authorized-keys file; give each worker its own .key and the coordinator's .pub with --coordinator-key. \
            Never overwrites an existing file.
            """)

    @Argument(help: "The key's name, or a path without extension (e.g. /etc/tessera/worker-1).") var name: String

    func run() throws {
        do {
            let written = try SecurityError.generate(name: name)
            print("\(written.keyFile)\n\(written.publicFile)\npublic key \(written.keys.publicKey)")
        } catch let error as SecurityError {
            throw Tessera.fail(error)
        } catch {
            FileHandle.standardError.write(Data("tessera: \(name): \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
