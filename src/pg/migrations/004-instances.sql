-- Several instances on one database (README, Running several instances).

-- One rate-limit bucket as every instance spends it: the row is locked, refilled to `now_ms`
-- (the server's clock, epoch ms) and spent in one call, so concurrent instances take turns
-- on it and one limit stays one limit. The arithmetic is ratelimit/bucket.ts's `refill` and
-- `take`: a bucket never seen is full; a clock gone back mints nothing; `charge` may go into
-- debt down to an hour of refill; `refund` never passes the capacity and drops a full bucket;
-- `peek` answers what `consume` would, changing nothing. Answers whether the take was allowed and the level left (null: no
-- bucket, for `peek` and `refund` of a key that has none).
CREATE FUNCTION rate_bucket_take(p_key text, p_limit double precision, p_now_ms double precision, p_mode text,
  OUT allowed boolean, OUT tokens double precision)
LANGUAGE plpgsql AS $$
DECLARE
  eps constant double precision := 1e-9;
  held double precision;
  held_at double precision;
  level double precision;
  at double precision;
BEGIN
  IF p_mode NOT IN ('consume', 'charge', 'refund', 'peek') THEN
    RAISE EXCEPTION 'rate_bucket_take: unknown mode %', p_mode;
  END IF;
  IF p_mode IN ('consume', 'charge') THEN
    INSERT INTO rate_buckets AS r (key, tokens, updated_at, limit_per_minute)
    VALUES (p_key, p_limit, to_timestamp(p_now_ms / 1000), p_limit)
    ON CONFLICT (key) DO NOTHING;
  END IF;
  SELECT r.tokens, extract(epoch FROM r.updated_at)::double precision * 1000 INTO held, held_at
  FROM rate_buckets r WHERE r.key = p_key
  FOR UPDATE;
  IF NOT FOUND THEN
    allowed := true;
    tokens := NULL;
    RETURN;
  END IF;
  IF p_now_ms < held_at THEN
    level := least(p_limit, held);
    at := CASE WHEN p_now_ms < held_at - 60000 THEN p_now_ms ELSE held_at END;
  ELSE
    level := least(p_limit, held + (p_now_ms - held_at) * p_limit / 60000);
    at := p_now_ms;
  END IF;
  IF p_mode IN ('consume', 'peek') THEN
    allowed := level + eps >= 1;
    tokens := CASE WHEN allowed THEN greatest(0, level - 1) ELSE level END;
    IF p_mode = 'peek' THEN
      RETURN;
    END IF;
  ELSIF p_mode = 'charge' THEN
    allowed := true;
    tokens := greatest(level - 1, -60 * p_limit);
  ELSE
    allowed := true;
    tokens := least(p_limit, level + 1);
    IF tokens + eps >= p_limit THEN
      DELETE FROM rate_buckets r WHERE r.key = p_key;
      RETURN;
    END IF;
  END IF;
  UPDATE rate_buckets r SET tokens = rate_bucket_take.tokens, updated_at = to_timestamp(at / 1000),
    limit_per_minute = p_limit
  WHERE r.key = p_key;
END
$$;

-- A new token's secret or a new user's password, waiting (5 minutes at most) for the page
-- after the POST that made it, whichever instance serves that page. Sealed (AES-256-GCM)
-- under a key derived from the session's id, which the database never holds (sessions are
-- keyed by its SHA-256): whoever reads the table cannot open it. Taken by a DELETE, so it
-- is shown once; a logout (the session's row deleted) takes it too.
CREATE TABLE shown_once (
  key text PRIMARY KEY CHECK (key ~ '^[A-Za-z0-9]{22}$'),
  session_key text NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
  sealed bytea NOT NULL,
  until timestamptz NOT NULL
);
CREATE INDEX shown_once_session ON shown_once (session_key);
CREATE INDEX shown_once_until ON shown_once (until);

-- When each periodic job of the upkeep (the expiry sweep, the session and record sweeps, the
-- API log's retention) last ran, on any instance: an instance does a round only when it
-- moves `last_run` on from a round old enough (pg/turns.ts), so the instances sharing the
-- database do each round once between them, not once each.
CREATE TABLE upkeep_runs (
  job text PRIMARY KEY,
  last_run timestamptz NOT NULL
);

-- Until when the instance carrying out an Idempotency-Key's request holds it (renewed while
-- it runs): a retry on another instance waits for its answer meanwhile, and takes the
-- request over only once that time has passed (a crash). Null: held by no one.
ALTER TABLE idempotency_records ADD COLUMN held_until timestamptz;
