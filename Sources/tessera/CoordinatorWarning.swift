import Foundation
import TesseraStore

/// A queued job waits for a coordinator: `submit` and `watch` say so when none has been seen in the store
/// lately (the coordinators table: each running coordinator heartbeats there, and one that stops leaves it).
enum CoordinatorWarning {
    /// Past this silence a coordinator counts as gone: `tessera coordinator`'s default --takeover-after,
    /// after which another takes its jobs over.
    static let recent = 15.0

    /// The warning for the coordinators the store lists, for a job that `assigned` may take (nil: any);
    /// nil when one was seen lately.
    static func text(_ coordinators: [CoordinatorRecord], assigned: String?) -> String? {
        let silence = coordinators.filter { assigned == nil || $0.id == assigned }.map(\.silentSeconds).min()
        if let silence, silence < recent { return nil }
        let since = silence.map { " for \(duration($0))" } ?? ""
        if let assigned {
            return "tessera: warning: coordinator \(assigned) has not been seen in the job store\(since): the job stays queued until it runs"
        }
        return "tessera: warning: no coordinator has been seen in the job store\(since): the job stays queued until one runs (tessera coordinator)"
    }

    /// Prints the warning when it applies; a store that cannot say is no reason to fail the command.
    static func warnIfNone(_ store: JobStore, assigned: String?) {
        guard let coordinators = try? store.coordinators(), let text = text(coordinators, assigned: assigned) else { return }
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
