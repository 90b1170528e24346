import Foundation
import TesseraStore

/// A queued job waits for a coordinator: `submit` and `watch` say so when none runs.
enum CoordinatorWarning {
    /// The warning for what the store shows, or nil when a coordinator may be running.
    static func text(_ sighting: CoordinatorSighting) -> String? {
        guard sighting.otherSessions == 0 else { return nil }
        let seen = sighting.lastSeenSecondsAgo.map { "last seen \(duration($0)) ago" } ?? "none seen yet"
        return "tessera: warning: no coordinator is connected to the job store (\(seen)): the job stays queued until one runs (tessera coordinator)"
    }

    /// Prints the warning when it applies; a store that cannot say is no reason to fail the command.
    static func warnIfNone(_ store: JobStore) {
        guard let sighting = try? store.coordinatorSighting(), let text = text(sighting) else { return }
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// `45 s`, `12 min`, `3 h`, `2 days`.
    static func duration(_ seconds: Double) -> String {
        switch seconds {
        case ..<120: return "\(Int(seconds.rounded())) s"
        case ..<7200: return "\(Int((seconds / 60).rounded())) min"
        case ..<172_800: return "\(Int((seconds / 3600).rounded())) h"
        default: return "\(Int((seconds / 86400).rounded())) days"
        }
    }
}
