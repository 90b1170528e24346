-- Tessera job store, version 3: a segment's result is `size_bytes` bytes at `result_offset` in
-- `result_path`. The coordinator appends a job's results to one spool file instead of a file each.
-- Results recorded before this version are whole files (offset 0).
ALTER TABLE segments
    ADD COLUMN result_offset bigint NOT NULL DEFAULT 0 CHECK (result_offset >= 0);
