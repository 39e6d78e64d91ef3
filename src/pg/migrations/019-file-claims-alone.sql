-- A paste's claim on bytes is made before the bytes are stored, and the bytes may be kept
-- elsewhere (FILE_STORE, README Files): a claim no longer needs their row.
ALTER TABLE file_claims DROP CONSTRAINT file_claims_sha256_fkey;
