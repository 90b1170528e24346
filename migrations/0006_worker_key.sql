-- Tessera job store, version 6: a worker id is bound to the CURVE public key it first joined with; a
-- worker that presents another key under that id is refused.
ALTER TABLE workers ADD COLUMN public_key text;
