-- Tessera job store, version 18: the libx264 threads a segment's encode takes at least (a plan's tail, when the
-- other encoders would idle while it runs). Null: the worker's own count.
ALTER TABLE segments ADD COLUMN encoder_threads integer;
