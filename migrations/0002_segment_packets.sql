-- Tessera job store, version 2: each segment's decode-order packet range, so that a coordinator that
-- restarts rebuilds the exact plan from the database, and the encoder that produced the job's headers.
ALTER TABLE segments
    ADD COLUMN first_packet integer,
    ADD COLUMN last_packet integer,
    ADD COLUMN pre_roll_packets integer NOT NULL DEFAULT 0,
    ADD COLUMN entry text NOT NULL DEFAULT 'idr',
    ADD CONSTRAINT segments_packet_range CHECK (last_packet >= first_packet);

-- The SPS/PPS every segment of a job must carry (hex), set by the first accepted result.
ALTER TABLE jobs ADD COLUMN extradata text;
