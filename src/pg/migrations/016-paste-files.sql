-- A paste's files (README, Files): their names, sizes, types and SHA-256 as a JSON array on
-- the paste's row (a kept revision has them in its fields), and the bytes themselves,
-- content-addressed, once however many pastes hold them, in chunks so no row is large.
ALTER TABLE pastes ADD COLUMN files jsonb;

CREATE TABLE file_blobs (
  sha256 text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  size bigint NOT NULL CHECK (size >= 0),
  head bytea NOT NULL
);

CREATE TABLE file_chunks (
  sha256 text NOT NULL REFERENCES file_blobs ON DELETE CASCADE,
  n integer NOT NULL CHECK (n >= 0),
  data bytea NOT NULL,
  PRIMARY KEY (sha256, n)
);

-- Each paste's claim on bytes, made before its row names them; the sweep drops a claim once
-- no version of the paste names the bytes, and the bytes with their last claim.
CREATE TABLE file_claims (
  sha256 text NOT NULL REFERENCES file_blobs ON DELETE CASCADE,
  holder text NOT NULL,
  claimed_at timestamptz NOT NULL,
  PRIMARY KEY (holder, sha256)
);
CREATE INDEX file_claims_sha256 ON file_claims (sha256);

-- Pastes whose claims the sweep must look at from `due` on (deleted, edited, burned, wiped).
CREATE TABLE file_releases (
  id bigserial PRIMARY KEY,
  holder text NOT NULL,
  due timestamptz NOT NULL
);
CREATE INDEX file_releases_due ON file_releases (due);
