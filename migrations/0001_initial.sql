-- Tessera job store, version 1: jobs, their segments, workers, and an append-only event log.
-- State transitions are listed in state_transitions; triggers refuse any other, write every
-- transition to job_events, keep the jobs' progress counters, and NOTIFY 'tessera_jobs'.

CREATE TABLE state_transitions (
    kind text NOT NULL CHECK (kind IN ('job', 'segment')),
    from_state text NOT NULL,
    to_state text NOT NULL,
    PRIMARY KEY (kind, from_state, to_state)
);

INSERT INTO state_transitions (kind, from_state, to_state) VALUES
    ('job', 'queued', 'planning'), ('job', 'queued', 'failed'), ('job', 'queued', 'canceled'),
    ('job', 'planning', 'encoding'), ('job', 'planning', 'queued'), ('job', 'planning', 'failed'),
    ('job', 'planning', 'canceled'),
    ('job', 'encoding', 'stitching'), ('job', 'encoding', 'failed'), ('job', 'encoding', 'canceled'),
    ('job', 'stitching', 'done'), ('job', 'stitching', 'encoding'), ('job', 'stitching', 'queued'),
    ('job', 'stitching', 'failed'), ('job', 'stitching', 'canceled'),
    ('segment', 'pending', 'leased'), ('segment', 'pending', 'failed'), ('segment', 'pending', 'canceled'),
    ('segment', 'leased', 'done'), ('segment', 'leased', 'pending'), ('segment', 'leased', 'failed'),
    ('segment', 'leased', 'canceled'),
    ('segment', 'done', 'pending');

CREATE TABLE workers (
    id text PRIMARY KEY,
    host text NOT NULL,
    capabilities jsonb NOT NULL DEFAULT '{}'::jsonb,
    first_seen timestamptz NOT NULL DEFAULT now(),
    last_heartbeat timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE jobs (
    id uuid PRIMARY KEY,
    state text NOT NULL DEFAULT 'queued'
        CHECK (state IN ('queued', 'planning', 'encoding', 'stitching', 'done', 'failed', 'canceled')),
    input text NOT NULL,
    output text NOT NULL,
    -- The frozen encoder settings every segment is encoded with, and their digest.
    settings jsonb NOT NULL,
    settings_hash text NOT NULL,
    segments_total integer NOT NULL DEFAULT 0 CHECK (segments_total >= 0),
    segments_done integer NOT NULL DEFAULT 0 CHECK (segments_done >= 0 AND segments_done <= segments_total),
    frames_total bigint NOT NULL DEFAULT 0 CHECK (frames_total >= 0),
    frames_done bigint NOT NULL DEFAULT 0 CHECK (frames_done >= 0 AND frames_done <= frames_total),
    error text,
    coordinator text,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at timestamptz,
    CHECK ((state IN ('done', 'failed', 'canceled')) = (finished_at IS NOT NULL)),
    CHECK (state <> 'failed' OR error IS NOT NULL)
);
CREATE INDEX jobs_by_state ON jobs (state, created_at);

CREATE TABLE segments (
    job_id uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    index integer NOT NULL CHECK (index >= 0),
    start_pts bigint NOT NULL,
    end_pts bigint NOT NULL CHECK (end_pts > start_pts),
    frame_count integer NOT NULL CHECK (frame_count > 0),
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'leased', 'done', 'failed', 'canceled')),
    -- Leases that ended without a result (expired, handed back with an error, worker died).
    attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    worker_id text REFERENCES workers (id),
    lease_expires_at timestamptz,
    result_path text,
    checksum text,
    size_bytes bigint,
    encode_seconds double precision,
    last_error text,
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (job_id, index),
    CHECK ((state = 'leased') = (lease_expires_at IS NOT NULL)),
    CHECK (state <> 'leased' OR worker_id IS NOT NULL),
    CHECK (state <> 'done' OR (checksum IS NOT NULL AND size_bytes IS NOT NULL))
);
CREATE INDEX segments_pending ON segments (job_id, frame_count DESC, index) WHERE state = 'pending';
CREATE INDEX segments_leased ON segments (lease_expires_at) WHERE state = 'leased';

CREATE TABLE job_events (
    id bigserial PRIMARY KEY,
    job_id uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    segment_index integer,
    from_state text,
    to_state text NOT NULL,
    detail text,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX job_events_by_job ON job_events (job_id, id);

-- Before a write: refuse transitions not in the table; stamp times.
CREATE FUNCTION tessera_check_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.state IS DISTINCT FROM OLD.state AND NOT EXISTS (
        SELECT 1 FROM state_transitions
        WHERE kind = TG_ARGV[0] AND from_state = OLD.state AND to_state = NEW.state
    ) THEN
        RAISE EXCEPTION '% cannot go from % to %', TG_ARGV[0], OLD.state, NEW.state
            USING ERRCODE = 'check_violation';
    END IF;
    NEW.updated_at := clock_timestamp();
    IF TG_ARGV[0] = 'job' THEN
        IF NEW.state IN ('done', 'failed', 'canceled') THEN
            NEW.finished_at := coalesce(NEW.finished_at, clock_timestamp());
        ELSE
            NEW.finished_at := NULL;
        END IF;
    END IF;
    RETURN NEW;
END $$;

-- After a job is created or changes: log its transitions, tell listeners.
CREATE FUNCTION tessera_job_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO job_events (job_id, from_state, to_state) VALUES (NEW.id, NULL, NEW.state);
    ELSIF NEW.state IS DISTINCT FROM OLD.state THEN
        INSERT INTO job_events (job_id, from_state, to_state, detail) VALUES (NEW.id, OLD.state, NEW.state, NEW.error);
    END IF;
    PERFORM pg_notify('tessera_jobs', NEW.id::text || ' ' || NEW.state);
    RETURN NULL;
END $$;

-- After a segment changes state: log it and keep the job's progress counters.
CREATE FUNCTION tessera_segment_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.state IS DISTINCT FROM OLD.state THEN
        INSERT INTO job_events (job_id, segment_index, from_state, to_state, detail)
        VALUES (NEW.job_id, NEW.index, OLD.state, NEW.state,
                CASE WHEN NEW.state = 'leased' THEN 'worker ' || NEW.worker_id ELSE NEW.last_error END);
        IF NEW.state = 'done' THEN
            UPDATE jobs SET segments_done = segments_done + 1, frames_done = frames_done + NEW.frame_count
            WHERE id = NEW.job_id;
        ELSIF OLD.state = 'done' THEN
            UPDATE jobs SET segments_done = segments_done - 1, frames_done = frames_done - NEW.frame_count
            WHERE id = NEW.job_id;
        END IF;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER jobs_check BEFORE UPDATE ON jobs
    FOR EACH ROW EXECUTE FUNCTION tessera_check_transition('job');
CREATE TRIGGER jobs_changed AFTER INSERT OR UPDATE ON jobs
    FOR EACH ROW EXECUTE FUNCTION tessera_job_changed();
CREATE TRIGGER segments_check BEFORE UPDATE ON segments
    FOR EACH ROW EXECUTE FUNCTION tessera_check_transition('segment');
CREATE TRIGGER segments_changed AFTER UPDATE OF state ON segments
    FOR EACH ROW EXECUTE FUNCTION tessera_segment_changed();
