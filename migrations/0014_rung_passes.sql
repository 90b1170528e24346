-- Tessera job store, version 14: a ladder job in two passes records a second pass per segment and rung, each
-- rung with its own bitrate and its own first pass's statistics. A single output's passes are rung 0.
ALTER TABLE segment_passes ADD COLUMN rung integer NOT NULL DEFAULT 0 CHECK (rung >= 0);
ALTER TABLE segment_passes DROP CONSTRAINT segment_passes_pkey;
ALTER TABLE segment_passes ADD PRIMARY KEY (job_id, index, rung);
