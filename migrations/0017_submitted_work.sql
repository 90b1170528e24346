-- Tessera job store, version 18: the work a job asks of the encoders as its submitter estimated it (pixels to
-- encode: the input's frames times its width and height, from its header), so that queued jobs are claimed for
-- planning shortest first. Null: not known at submit (an input only the coordinator can read).
ALTER TABLE jobs ADD COLUMN submitted_work double precision;
