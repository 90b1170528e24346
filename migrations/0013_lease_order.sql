-- Tessera job store, version 13: pending segments lease longest first by the seconds their last encode took
-- when they have one (a two-pass job's second pass, by its first pass), else by their frames; the index
-- follows the order.
DROP INDEX segments_pending;
CREATE INDEX segments_pending ON segments (job_id, encode_seconds DESC NULLS LAST, frame_count DESC, index) WHERE state = 'pending';
