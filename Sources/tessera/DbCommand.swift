import ArgumentParser
import Foundation
import TesseraStore

struct Db: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db",
        abstract: "Manage the embedded PostgreSQL (a private server on a Unix socket, no TCP port).",
        subcommands: [Start.self, Stop.self, StatusCommand.self])

    struct Start: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "start", abstract: "Initialise (once) and start the embedded server.")
        @OptionGroup var database: DatabaseOptions

        func run() throws {
            do throws(StoreError) {
                let server = try database.embeddedOnly("start")
                try server.start()
                let store = try JobStore(url: server.url, migrate: true, reconnectTimeout: 5)
                store.close()
                FileHandle.standardError.write(Data("tessera: PostgreSQL running in \(server.directory.path)\n".utf8))
                print(server.url)
            } catch {
                throw Tessera.fail(error)
            }
        }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "stop", 
            abstract: "Stop the embedded server; refused while clients (a coordinator, a job command) are connected, unless --force.")
        @Flag(help: "Stop it even while clients are connected (they lose the job store).") var force = false
        @OptionGroup var database: DatabaseOptions

        func run() throws {
            do throws(StoreError) {
                let server = try database.embeddedOnly("stop")
                guard try server.status().running else {
                    FileHandle.standardError.write(Data("tessera: the job store in \(server.directory.path) is not running\n".utf8))
                    return
                }
                let clients = try server.connectedClients()
                if clients > 0 && !force {
                    throw StoreError("the job store in \(server.directory.path) has \(clients) client(s) connected (a coordinator or a job command): give --force to stop it anyway")
                }
                try server.stop()
                let note = clients > 0 ? " (\(clients) client(s) disconnected)" : ""
                FileHandle.standardError.write(Data("tessera: stopped the job store in \(server.directory.path)\(note)\n".utf8))
            } catch {
                throw Tessera.fail(error)
            }
        }
    }

    struct StatusCommand: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status",
            abstract: "Is the job store up? The embedded server, or the one a database URL names (exit 0 when it is).")
        @OptionGroup var database: DatabaseOptions

        func run() throws {
            if let url = database.explicitURL, !database.namesDataDir {
                // The job store is the URL's: report that one, never the embedded one.
                let shown = DatabaseOptions.redacted(url)
                do throws(StoreError) {
                    let store = try JobStore(url: url, migrate: false, reconnectTimeout: 2)
                    store.close()
                    print("reachable \(shown)")
                } catch {
                    print("unreachable \(shown) (\(error.description))")
                    throw ExitCode(3)
                }
                return
            }
            let status: EmbeddedPostgres.Status
            do throws(StoreError) {
                status = try database.embedded.status()
            } catch {
                throw Tessera.fail(error)
            }
            print("\(status.running ? "running" : "stopped") \(status.directory)\(status.detail.isEmpty ? "" : " (\(status.detail))")")
            if !status.running { throw ExitCode(3) }
        }
    }
}
