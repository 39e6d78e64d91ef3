-- The first schema: every piece of state DATA_DIR holds (README, Data on disk), one table
-- per kind of record. Times are timestamptz (the server speaks epoch ms; both hold the
-- millisecond). Checks repeat what the server validates, so a hand-made row that the server
-- could never have written is refused at the door instead of failing a read later.

-- Accounts. Ids stay the small integers the file store hands out (a backup keeps them): the
-- accounts give each new user accounts_state.next_user_id, as the file's next_user_id.
CREATE TABLE users (
  id integer PRIMARY KEY CHECK (id >= 1),
  name text NOT NULL,
  role text NOT NULL CHECK (role IN ('admin', 'user')),
  -- The scrypt string (crypto/passwords.ts); null: a user who signs in with a token only.
  password text,
  created_at timestamptz NOT NULL,
  disabled boolean NOT NULL DEFAULT false,
  last_login_at timestamptz
);
-- Names are unique ignoring case: `Alice` and `alice` are one account.
CREATE UNIQUE INDEX users_name_key ON users (lower(name));

CREATE TABLE tokens (
  id text PRIMARY KEY,
  user_id integer NOT NULL REFERENCES users (id),
  label text NOT NULL,
  scopes text[] NOT NULL,
  rate_limit_per_minute integer NOT NULL CHECK (rate_limit_per_minute >= 0),
  -- SHA-256 hex of the secret; every API request looks its token up by it.
  hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz,
  max_paste_bytes integer CHECK (max_paste_bytes > 0),
  privacies text[],
  -- The order tokens were made in, which lists keep (the file kept them in that order).
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE
);
-- "My API Keys" lists a user's tokens; disabling a user finds them.
CREATE INDEX tokens_user ON tokens (user_id);

-- Revoked token ids (the latest 1,000), so a request still using one is logged with its id.
-- seq keeps the order they were revoked in, which decides what is trimmed first.
CREATE TABLE revoked_tokens (
  id text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  revoked_at timestamptz NOT NULL DEFAULT now()
);

-- The accounts' one row: the lock every writer takes (SELECT ... FOR UPDATE), so writers
-- from any process take turns; the version each change adds one to and announces on the
-- channel `accounts`, so a server knows with one cheap read whether its copy is current;
-- and the next user id, which never goes back (ids are not reused).
CREATE TABLE accounts_state (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  version bigint NOT NULL CHECK (version >= 0),
  next_user_id integer NOT NULL CHECK (next_user_id >= 1)
);
INSERT INTO accounts_state (version, next_user_id) VALUES (0, 1);

-- Login sessions, keyed by the SHA-256 of the cookie's id (never the id itself), as on disk:
-- whoever reads the database still cannot present a session.
CREATE TABLE sessions (
  key text PRIMARY KEY CHECK (key ~ '^[0-9a-f]{64}$'),
  user_id integer NOT NULL REFERENCES users (id),
  csrf text NOT NULL,
  created_at timestamptz NOT NULL,
  last_seen timestamptz NOT NULL
);
-- Disabling a user ends its sessions; the idle sweep ends the stale ones.
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_last_seen ON sessions (last_seen);

-- The web side's signing key: one row, made by whichever instance starts first
-- (INSERT ... ON CONFLICT DO NOTHING, then read), so every instance signs alike.
CREATE TABLE server_key (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  key bytea NOT NULL CHECK (octet_length(key) = 32),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Pastes. What is looked up or listed by is a column; the hash reserves its short code
-- through the generated column's unique index, as one file reserved both on disk.
-- No foreign key to users: a paste outlives nothing it needs, and owner 0 may come to mean
-- "anonymous" (CONTRACT §8).
CREATE TABLE pastes (
  hash text PRIMARY KEY CHECK (hash ~ '^[A-Za-z0-9]{10}$'),
  shortcode text GENERATED ALWAYS AS (left(hash, 6)) STORED UNIQUE,
  owner_id integer NOT NULL,
  privacy text NOT NULL CHECK (privacy IN ('public', 'unlisted', 'private')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  expire_at timestamptz,
  -- A burned or swept paste stays as a tombstone: content '""', burned and receipt kept.
  burned boolean NOT NULL DEFAULT false,
  language text NOT NULL,
  title text NOT NULL,
  revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
  -- Views are folded in from memory in batches (README, Data on disk and durability).
  view_count bigint NOT NULL DEFAULT 0 CHECK (view_count >= 0),
  highlight boolean NOT NULL,
  burn_after_read boolean NOT NULL,
  password text,
  -- The text as the JSON string literal the server holds it as (store/paste-record.ts):
  -- text columns and jsonb refuse U+0000, which a paste may contain; a literal escapes it.
  content_json text NOT NULL,
  -- A burned paste's receipt {at, via, token_id} (README, Burn receipts); only ever shown.
  receipt jsonb,
  -- When the expiry sweep must next look at the paste, as the file store's expiry index
  -- lists it: a live paste at its expiry, a tombstone when it is old enough to delete
  -- (pg/pastes.ts, sweepTimeOf). Whoever writes a row sets it; null: never.
  sweep_at timestamptz,
  -- The order rows were made in: "My pastes" lists pastes made in the same millisecond
  -- in the order they were made, as the owner's file listed them.
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE
);
-- "My pastes", newest first, without touching anyone else's rows.
CREATE INDEX pastes_owner_created ON pastes (owner_id, created_at DESC, seq DESC);
-- The expiry sweep finds what is due without reading the pastes it has nothing to do with.
CREATE INDEX pastes_sweep_at ON pastes (sweep_at) WHERE sweep_at IS NOT NULL;
-- The home page's recent list is a query on this index rather than a saved list: the
-- newest public pastes that are not one-time ones, which no crash can leave out of date.
CREATE INDEX pastes_recent_public ON pastes (created_at DESC, seq DESC)
  WHERE privacy = 'public' AND NOT burn_after_read;

-- Kept revisions (README, Revisions): the paste as it was before each edit, MAX_REVISIONS
-- per paste, oldest dropped first (the key orders them). They go with their paste.
CREATE TABLE paste_revisions (
  hash text NOT NULL REFERENCES pastes (hash) ON DELETE CASCADE,
  revision integer NOT NULL CHECK (revision >= 1),
  updated_at timestamptz NOT NULL,
  content_json text NOT NULL,
  -- The text's size in UTF-8 bytes, so a History page learns it without reading the text.
  bytes integer NOT NULL CHECK (bytes >= 0),
  -- The rest of that version (title, language, privacy, ...): read whole, never queried.
  fields jsonb NOT NULL,
  PRIMARY KEY (hash, revision)
);

-- Rate-limit buckets and every failure budget (one limiter, keyed `token:…`, `authfail:…`,
-- `login-ip:…`, …), so instances share one limit. An unlimited key has no bucket, so every
-- row has a finite level and a positive limit (ratelimit/bucket.ts).
CREATE TABLE rate_buckets (
  key text PRIMARY KEY,
  tokens double precision NOT NULL CHECK (tokens < 'Infinity' AND tokens > '-Infinity'),
  updated_at timestamptz NOT NULL,
  limit_per_minute double precision NOT NULL CHECK (limit_per_minute > 0 AND limit_per_minute < 'Infinity')
);
-- Pruning drops the buckets untouched long enough to be full again.
CREATE INDEX rate_buckets_updated_at ON rate_buckets (updated_at);

-- When and from where each token was last used, for "My API Keys" and the CLI.
CREATE TABLE token_usage (
  token_id text PRIMARY KEY,
  last_used_at timestamptz NOT NULL,
  last_ip text
);
-- Requests per token per hour (epoch hours), for the last day's chart; older hours are pruned.
CREATE TABLE token_usage_hourly (
  token_id text NOT NULL,
  hour bigint NOT NULL,
  count bigint NOT NULL CHECK (count >= 0),
  PRIMARY KEY (token_id, hour)
);
CREATE INDEX token_usage_hourly_hour ON token_usage_hourly (hour);

-- Idempotency-Key records (README, Safe retries), keyed by the hash of token id and key as
-- the file name was; neither is stored in the clear. They answer for 24 hours.
CREATE TABLE idempotency_records (
  id text PRIMARY KEY,
  endpoint text NOT NULL,
  fingerprint text NOT NULL,
  hash text NOT NULL,
  done boolean NOT NULL,
  at timestamptz NOT NULL,
  revision integer
);
CREATE INDEX idempotency_records_at ON idempotency_records (at);

-- The API log (README, API request log): append-only, each line as the file log writes it
-- (log/appender.ts jsonLine: strings cut to MAX_CHARS, a cut endpoint's full length beside
-- it). The id is the order lines were written in, which the admin page lists newest first
-- and pages by; LOG_RETENTION_DAYS deletes by time.
CREATE TABLE api_log (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  time timestamptz NOT NULL,
  token_id text,
  user_id integer,
  method text NOT NULL,
  endpoint text NOT NULL,
  endpoint_length integer,
  status smallint NOT NULL,
  ip text NOT NULL,
  duration_ms double precision NOT NULL,
  request_id text,
  error text,
  unlogged integer
);
-- The time filter and the retention's delete; the token filter, newest first.
CREATE INDEX api_log_time ON api_log (time);
CREATE INDEX api_log_token ON api_log (token_id, id DESC) WHERE token_id IS NOT NULL;

-- The audit log (README, Audit log): every admin action, never pruned, listed newest first
-- by id. before/after never hold a secret or a hash of one; they are `json`, not `jsonb`,
-- so they read back as written (key order kept); SQL NULL is a value that was absent.
CREATE TABLE audit_log (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  time timestamptz NOT NULL,
  via text NOT NULL CHECK (via IN ('web', 'cli', 'api')),
  user_id integer,
  user_name text,
  ip text,
  action text NOT NULL,
  target text NOT NULL,
  before json,
  after json
);
