import Foundation

/// What the store shows of coordinators, for commands that queue or follow a job.
public struct CoordinatorSighting: Sendable, Equatable {
    /// Other sessions connected to the job store's database now. A running coordinator always holds
    /// some, so none means that no coordinator runs.
    public var otherSessions: Int
    /// Seconds since a coordinator was last at work here (a worker joining it, a job it holds changing);
    /// nil when never.
    public var lastSeenSecondsAgo: Double?
}

extension JobStore {
    public func coordinatorSighting() throws(StoreError) -> CoordinatorSighting {
        let row = try run("looking for coordinators", """
            SELECT (SELECT count(*) FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend') AS others,
                   extract(epoch FROM clock_timestamp() - greatest(
                       (SELECT max(last_heartbeat) FROM workers),
                       (SELECT max(updated_at) FROM jobs WHERE coordinator IS NOT NULL)))::float8 AS silent
            """).first
        return CoordinatorSighting(otherSessions: row?.int("others") ?? 0, lastSeenSecondsAgo: row?.double("silent"))
    }
}
