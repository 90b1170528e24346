-- Tessera job store, version 11: a segment recorded done moves its frames from the job's frames in flight
-- to its frames done in one step. Before, they counted in both until the coordinator next recorded its
-- frames in flight, and a job's progress went back by a segment's frames when it did.
CREATE OR REPLACE FUNCTION tessera_segment_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.state IS DISTINCT FROM OLD.state THEN
        INSERT INTO job_events (job_id, segment_index, from_state, to_state, detail)
        VALUES (NEW.job_id, NEW.index, OLD.state, NEW.state,
                CASE WHEN NEW.state = 'leased' THEN 'worker ' || NEW.worker_id ELSE NEW.last_error END);
        IF NEW.state = 'done' THEN
            UPDATE jobs SET segments_done = segments_done + 1, frames_done = frames_done + NEW.frame_count,
                frames_encoding = greatest(frames_encoding - NEW.frame_count, 0)
            WHERE id = NEW.job_id;
        ELSIF OLD.state = 'done' THEN
            UPDATE jobs SET segments_done = segments_done - 1, frames_done = frames_done - NEW.frame_count
            WHERE id = NEW.job_id;
        END IF;
    END IF;
    RETURN NULL;
END $$;
