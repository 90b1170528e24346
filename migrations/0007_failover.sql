-- Tessera job store, version 7: coordinators register and heartbeat here, so a live one can adopt the
-- jobs of one that went silent; a job pins its input's identity; a job that waits on a local fault
-- (spool or output disk full) says why.
CREATE TABLE coordinators (
    id text PRIMARY KEY,
    host text NOT NULL,
    endpoint text,
    started_at timestamptz NOT NULL DEFAULT now(),
    last_seen timestamptz NOT NULL DEFAULT now()
);

-- What the input was when the job was planned: size, modification time, a digest of its probe, and the
-- host, device and inode it was read on (compared only on that host).
ALTER TABLE jobs ADD COLUMN input_identity jsonb;
-- Why the job is not progressing now (nil when it is), and since when.
ALTER TABLE jobs ADD COLUMN stalled text;
ALTER TABLE jobs ADD COLUMN stalled_since timestamptz;
CREATE INDEX jobs_by_coordinator ON jobs (coordinator) WHERE state IN ('planning', 'encoding', 'stitching');
