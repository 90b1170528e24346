-- Tessera job store, version 9: a job's encode between segment completions. Its coordinator records, about
-- once a second, the frames its workers have encoded in tasks still in flight and the frames per second
-- over the last seconds, and that as a multiple of real time (status, watch and a transcode's bar show frames, speed and time left from them).
ALTER TABLE jobs ADD COLUMN frames_encoding bigint NOT NULL DEFAULT 0 CHECK (frames_encoding >= 0);
ALTER TABLE jobs ADD COLUMN fps double precision;
-- The same rate as seconds of video per second (1.0: real time).
ALTER TABLE jobs ADD COLUMN speed double precision;
