-- Tessera job store, version 12: a second pass's statistics and MB-tree files are stored as they are, not
-- compressed: megabytes of hex per segment, which pglz took about 0.2 s over on a 48 s 720p job while every
-- worker waited for its second pass.
ALTER TABLE segment_passes ALTER COLUMN stats SET STORAGE EXTERNAL;
ALTER TABLE segment_passes ALTER COLUMN macroblock_tree SET STORAGE EXTERNAL;
