-- Tessera job store, version 8: a job's priority, 0 to 100 (50 unless the submitter says otherwise).
-- Planning and leasing take higher priorities first, then, within a priority, the fairest share.
ALTER TABLE jobs ADD COLUMN priority smallint NOT NULL DEFAULT 50 CHECK (priority BETWEEN 0 AND 100);
-- The output's pixels per frame, recorded with the plan: the queued work a new job's plan weighs.
ALTER TABLE jobs ADD COLUMN frame_pixels integer CHECK (frame_pixels > 0);
-- The next queued job to plan, and listing the newest jobs with many queued.
CREATE INDEX jobs_queued_by_priority ON jobs (priority DESC, created_at) WHERE state = 'queued';
CREATE INDEX jobs_by_created ON jobs (created_at DESC);
