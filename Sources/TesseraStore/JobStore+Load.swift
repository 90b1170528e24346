import TesseraCore

extension JobStore {
    /// The load a job of `priority` planned now by `coordinator` joins, in one statement: the segments
    /// leased on its jobs (each one an encoder busy; their work less the frames reported encoded, about
    /// once a second) and the pending segments that lease before this job's
    /// (its priority or higher), weighted by their jobs' pixels per frame, the jobs still queued for any
    /// coordinator, and how long ago the newest job was submitted. Free encoders are not known to the
    /// store: 0 while segments are leased.
    public func load(coordinator: String, priority: Int) throws(StoreError) -> ClusterLoad {
        let row = try run("reading the queued work", """
            SELECT count(*) FILTER (WHERE s.state = 'leased') AS leased,
                coalesce(sum(s.frame_count::double precision * coalesce(j.frame_pixels, \(Self.unknownFramePixels)))
                    FILTER (WHERE s.state = 'leased'), 0) AS leased_work,
                coalesce(sum(s.frame_count::double precision * coalesce(j.frame_pixels, \(Self.unknownFramePixels)))
                    FILTER (WHERE s.state = 'pending' AND j.priority >= $2), 0) AS pending_work,
                (SELECT coalesce(sum(frames_encoding::double precision * coalesce(frame_pixels, \(Self.unknownFramePixels))), 0)
                    FROM jobs WHERE state = 'encoding' AND coordinator = $1) AS encoded_work,
                (SELECT count(*) FROM jobs WHERE state = 'queued') AS queued,
                (SELECT extract(epoch FROM clock_timestamp() - max(created_at))::double precision FROM jobs) AS quiet
            FROM jobs j JOIN segments s ON s.job_id = j.id
            WHERE j.state = 'encoding' AND j.coordinator = $1 AND s.state IN ('pending', 'leased')
            """, [coordinator, String(priority)]).first
        let leased = row?.int("leased") ?? 0
        // What the encoders have left of their leases: the frames they reported encoded are done.
        let leasedWork = max(0, (row?.double("leased_work") ?? 0) - (row?.double("encoded_work") ?? 0))
        return ClusterLoad(encoders: leased, freeEncoders: 0, leasedWork: leasedWork,
                           pendingWork: row?.double("pending_work") ?? 0, queuedJobs: row?.int("queued") ?? 0,
                           quietSeconds: row?.double("quiet") ?? .infinity)
    }

    /// Pixels per frame assumed for a job planned before they were recorded: 720p.
    static let unknownFramePixels = 1280 * 720
}
