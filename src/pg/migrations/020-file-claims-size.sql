-- Each claim says the size of the bytes it holds (README, Metrics): /metrics counts the files
-- stored from the claims, wherever the bytes are (FILE_STORE), never by listing a bucket.
-- Claims made before are given it from the bytes' row, else from the paste that names them.
ALTER TABLE file_claims ADD COLUMN size bigint CHECK (size >= 0);
UPDATE file_claims c SET size = b.size FROM file_blobs b WHERE b.sha256 = c.sha256;
UPDATE file_claims c SET size = (
  SELECT (f->>'size')::bigint FROM pastes p CROSS JOIN LATERAL jsonb_array_elements(p.files) f
  WHERE p.hash = c.holder AND f->>'sha256' = c.sha256 LIMIT 1
) WHERE c.size IS NULL;
