-- Tessera job store, version 10: a two-pass job's second pass. Once every segment's first pass is done, its
-- coordinator allocates the file's bits over the segments and records here, per segment, the bitrate of its
-- second pass and the statistics of its first (libx264's stats text and MB-tree file, hex), in the same
-- transaction that sends the segments back to pending; a job with rows here is in its second pass.
CREATE TABLE segment_passes (
    job_id uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    index integer NOT NULL CHECK (index >= 0),
    bitrate integer NOT NULL CHECK (bitrate > 0),
    stats text NOT NULL,
    macroblock_tree text NOT NULL,
    PRIMARY KEY (job_id, index)
);
