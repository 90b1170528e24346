-- Tessera job store, version 15: each worker key's audit record (its results encoded again by another key and
-- compared) and its quarantine: a key whose result disagreed with two others gets no work until an operator
-- lifts it (`tessera workers --lift`). A key is its CURVE public key, or the worker id on a plaintext transport.
CREATE TABLE worker_audits (
    identity text PRIMARY KEY,
    worker_id text NOT NULL,
    audited integer NOT NULL DEFAULT 0,
    matched integer NOT NULL DEFAULT 0,
    mismatched integer NOT NULL DEFAULT 0,
    quarantined_at timestamptz,
    quarantine_reason text
);
