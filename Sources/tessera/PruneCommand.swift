import ArgumentParser
import Foundation
import TesseraCore
import TesseraEngine
import TesseraStore

struct Prune: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Remove the jobs that ended (done, failed, canceled) longer ago than --older-than, with their events.",
        discussion: "Prints the removed jobs' ids on stdout, one a line. Jobs that have not ended are never removed.")

    @Option(help: ArgumentHelp("How long ago the jobs ended: 30s, 15m, 12h, 7d or 2w.", valueName: "age")) var olderThan: String
    @Flag(help: "Print the outcome as JSON on stdout.") var json = false
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        guard let seconds = Self.seconds(olderThan) else {
            throw Tessera.fail(TesseraError(.settings, "--older-than \(olderThan)", "not an age: give a number and a unit, s, m, h, d or w (7d)"))
        }
        do throws(StoreError) {
            let store = try database.open()
            defer { store.close() }
            let ids = try store.prune(endedBefore: seconds)
            FileHandle.standardError.write(Data("tessera: removed \(ids.count) job(s) that ended more than \(olderThan) ago\n".utf8))
            if json {
                print(CanonicalJSON.encode(PruneOutcome(removed: ids, olderThanSeconds: seconds)))
            } else {
                ids.forEach { print($0) }
            }
        } catch {
            throw Tessera.fail(error)
        }
    }

    /// Seconds in `7d`, `12h`, `15m`, `30s` or `2w`; nil for anything else.
    static func seconds(_ age: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
        guard let unit = age.last.flatMap({ units[$0] }), let count = Double(age.dropLast()), count >= 0, count.isFinite else { return nil }
        return count * unit
    }
}
