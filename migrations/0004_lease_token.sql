-- Tessera job store, version 4: each lease has a token, drawn when the segment is leased and sent
-- with its task. A result or failure counts only with the token of the lease it answers, so a late
-- result of an earlier lease, or one forged by another peer, changes nothing.
ALTER TABLE segments ADD COLUMN lease_token text;
