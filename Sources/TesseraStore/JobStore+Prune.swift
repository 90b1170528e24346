import Foundation

extension JobStore {
    /// Deletes the jobs that ended (done, failed, canceled) more than `seconds` ago, with their segments
    /// and events; returns their ids, oldest first.
    public func prune(endedBefore seconds: Double) throws(StoreError) -> [String] {
        try run("pruning ended jobs", """
            WITH gone AS (
                DELETE FROM jobs WHERE state IN ('done', 'failed', 'canceled')
                    AND finished_at < clock_timestamp() - make_interval(secs => $1::double precision)
                RETURNING id, finished_at
            )
            SELECT id::text AS id FROM gone ORDER BY finished_at, id
            """, [String(seconds)]).all.map { $0.string("id") }
    }
}
