-- A bucket that runs dry is announced on channel `buckets` as "<until ms> <key>" (and one
-- filled again by a refund as "0 <key>"), so each instance knows which failure budgets are
-- spent without a query per request (pg/limiter.ts, README: Running several instances).
-- Otherwise the same function as migration 4's.
CREATE OR REPLACE FUNCTION rate_bucket_take(p_key text, p_limit double precision, p_now_ms double precision, p_mode text,
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
      PERFORM pg_notify('buckets', '0 ' || p_key);
      RETURN;
    END IF;
  END IF;
  UPDATE rate_buckets r SET tokens = rate_bucket_take.tokens, updated_at = to_timestamp(at / 1000),
    limit_per_minute = p_limit
  WHERE r.key = p_key;
  -- Every instance learns when a bucket runs dry, and until when (pg/limiter.ts), so that
  -- asking whether one is spent costs no query; a refund that fills it again says so too.
  IF tokens + eps < 1 THEN
    PERFORM pg_notify('buckets', (at + (1 - tokens) * 60000 / p_limit)::text || ' ' || p_key);
  ELSIF p_mode = 'refund' THEN
    PERFORM pg_notify('buckets', '0 ' || p_key);
  END IF;
END
$$;
