-- Tessera job store, version 5: a job may name the coordinator that is to take it (`tessera transcode`
-- names its private one; `tessera submit --coordinator ID`). Other coordinators leave such a job alone.
ALTER TABLE jobs ADD COLUMN assigned_coordinator text;
