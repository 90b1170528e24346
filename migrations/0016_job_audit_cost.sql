-- Tessera job store, version 16: what audits cost each job (`status --json`'s `audit`): segments audited, extra
-- encode seconds, mismatches, audits given up, and the workers its audits quarantined. Null: none audited yet.
ALTER TABLE jobs ADD COLUMN audit jsonb;
