import Foundation
import PGClient

/// Waiting out a store that went away, as a coordinator must: retrying with back-off for as long as it
/// takes, saying so once in a while, and giving up only when its owner stops.
public struct StorePatience: Sendable {
    /// Whether to keep trying (false once the owner is stopping).
    public var keepGoing: @Sendable () -> Bool
    /// Told, at most every `reportInterval` seconds while the store is unreachable, for how long and why.
    public var report: @Sendable (_ seconds: Double, _ error: String) -> Void
    public var reportInterval: Double = 10

    public init(keepGoing: @escaping @Sendable () -> Bool, report: @escaping @Sendable (Double, String) -> Void) {
        self.keepGoing = keepGoing
        self.report = report
    }

    /// A throttled reporter of failed attempts since `since`: returns whether to go on.
    func attemptFailed(since: Double, lastReport: inout Double, _ error: String) -> Bool {
        let now = Date().timeIntervalSince1970
        if now - lastReport >= reportInterval {
            lastReport = now
            report(now - since, error)
        }
        return keepGoing()
    }
}

extension JobStore {
    /// Connects to `url`, retrying an unreachable server until it answers or `patience` gives up, and
    /// keeps this patience for every reconnect after.
    public static func connect(url: String, migrate: Bool = false, patience: StorePatience) throws(StoreError) -> JobStore {
        let since = Date().timeIntervalSince1970
        var lastReport = -Double.infinity
        var delay = 0.1
        while true {
            do {
                let store = try JobStore(url: url, migrate: migrate, reconnectTimeout: .infinity)
                store.wait(with: patience)
                return store
            } catch where error.isConnectionFailure {
                guard patience.attemptFailed(since: since, lastReport: &lastReport, error.description) else { throw error }
                Thread.sleep(forTimeInterval: delay)
                delay = min(delay * 2, 2)
            }
        }
    }

    /// Waits out a lost connection for as long as `patience` allows, reporting once in a while.
    public func wait(with patience: StorePatience) {
        db.reconnectTimeout = .infinity
        // The outage under way: the session it broke, when it began, when it was last reported.
        var outage: (session: Int, since: Double, lastReport: Double)?
        db.reconnectAttemptFailed = { [weak db] error in
            let now = Date().timeIntervalSince1970, session = db?.sessionsOpened ?? 0
            var current = outage.flatMap { $0.session == session ? $0 : nil } ?? (session: session, since: now, lastReport: -Double.infinity)
            defer { outage = current }
            return patience.attemptFailed(since: current.since, lastReport: &current.lastReport, error.message)
        }
    }
}
