-- Tessera job store, version 14: ladder jobs' rungs. A ladder job in two passes records a second pass per segment
-- and rung, each rung with its own bitrate and its own first pass's statistics; a single output's passes are
-- rung 0.
ALTER TABLE segment_passes ADD COLUMN rung integer NOT NULL DEFAULT 0 CHECK (rung >= 0);
ALTER TABLE segment_passes DROP CONSTRAINT segment_passes_pkey;
ALTER TABLE segment_passes ADD PRIMARY KEY (job_id, index, rung);
-- The outputs a job makes (a ladder's rungs, else 1): its progress counts every output's frames, while its
-- frame counts here stay the source's (a ladder's work per frame is in frame_pixels).
ALTER TABLE jobs ADD COLUMN outputs integer NOT NULL DEFAULT 1 CHECK (outputs >= 1);
