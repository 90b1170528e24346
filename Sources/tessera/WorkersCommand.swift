import ArgumentParser
import Foundation
import TesseraCore
import TesseraStore

/// The workers' audit records (`WorkerAudit`), and the operator's way to lift a quarantine.
struct Workers: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workers",
        abstract: "List worker keys with their audit record; lift a quarantine.",
        discussion: """
            Each worker key whose results were audited (encoded again by another key and compared) or that was \
            quarantined: WORKER KEY AUDITED MATCHED MISMATCHED, then why it is quarantined. A quarantined key gets \
            no work from any coordinator until --lift names its worker id or key; the coordinator takes it back \
            within seconds.
            """)

    @Option(help: ArgumentHelp("Lift the quarantine of this worker id or key.", valueName: "id")) var lift: String?
    @Flag(help: "One JSON array of records (keys identity, workerID, audited, matched, mismatched, quarantineReason, quarantinedAt).")
    var json = false
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        do throws(StoreError) {
            let store = try database.open()
            defer { store.close() }
            if let lift {
                let lifted = try store.liftQuarantine(lift)
                guard !lifted.isEmpty else { throw StoreError("\(lift): no quarantined worker has this id or key") }
                print(json ? CanonicalJSON.encode(lifted) : lifted.map { "lifted the quarantine of key \($0)" }.joined(separator: "\n"))
                return
            }
            let records = try store.workerAudits()
            if json { return print(CanonicalJSON.encode(records)) }
            for r in records {
                var line = "\(r.workerID) \(r.identity) audited \(r.audited) matched \(r.matched) mismatched \(r.mismatched)"
                if let reason = r.quarantineReason { line += " QUARANTINED since \(r.quarantinedAt ?? "?"): \(reason)" }
                print(line)
            }
        } catch {
            throw Tessera.fail(error)
        }
    }
}
