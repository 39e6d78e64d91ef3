-- The API log in chunks (pg/api-log.ts; bench/README.md, "PostgreSQL against the data
-- folder"). A row and six index entries for every request cost the database more than the
-- request itself; now each flush of a server's log writes its lines, up to a thousand at a
-- time, as one text value, a JSON array a line (the file line's fields without their keys), and
-- api_log_seen says which tokens, users, endpoints and status classes each chunk holds, so a
-- filtered page reads only the chunks that can match (pg/api-log-query.ts).
CREATE TABLE api_log_chunks (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The earliest and the latest time of its lines: time filters and retention.
  first_time timestamptz NOT NULL,
  last_time timestamptz NOT NULL,
  -- Lines held; a chunk with none left is deleted.
  line_count integer NOT NULL CHECK (line_count > 0),
  -- Its lines, oldest first, each a JSON array (api_log_line below), separated by a newline,
  -- which JSON text never holds raw. Retention leaves `null` in the place of a line it
  -- deletes from a chunk, so the others keep their places, which a page's cursor names.
  lines text NOT NULL
);
CREATE INDEX api_log_chunks_first_time ON api_log_chunks (first_time);
CREATE INDEX api_log_chunks_last_time ON api_log_chunks (last_time);

-- Which values a chunk's lines hold, each once: t a token id, u a user id, e an endpoint,
-- s a status class (status / 100). A chunk may be listed for a value none of its lines holds
-- any more (retention rewrites a chunk that straddles its cut), never the other way round.
CREATE TABLE api_log_seen (
  kind "char" NOT NULL CHECK (kind IN ('t', 'u', 'e', 's')),
  value text NOT NULL,
  chunk bigint NOT NULL,
  PRIMARY KEY (kind, value, chunk)
);
CREATE INDEX api_log_seen_chunk ON api_log_seen (chunk);

-- One line of a chunk as pg/api-log.ts writes it (chunkLine): the file line's fields as a JSON
-- array, in its fixed order; pg/api-log-query.ts reads it back as the file line.
CREATE FUNCTION api_log_line(p_time timestamptz, p_token_id text, p_user_id bigint, p_method text, p_endpoint text,
  p_endpoint_length integer, p_status integer, p_ip text, p_duration_ms double precision, p_request_id text,
  p_error text, p_unlogged integer)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT json_build_array(to_char(p_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), p_token_id, p_user_id,
    p_method, p_endpoint, p_status, p_ip, p_duration_ms, p_request_id, p_error, p_unlogged, p_endpoint_length)::text
$$;

-- The lines written so far, a thousand to a chunk, in their order.
INSERT INTO api_log_chunks (id, first_time, last_time, line_count, lines) OVERRIDING SYSTEM VALUE
SELECT id / 1000 + 1, min(time), max(time), count(*),
  string_agg(api_log_line(time, token_id, user_id, method, endpoint, endpoint_length, status, ip, duration_ms,
    request_id, error, unlogged), E'\n' ORDER BY id)
FROM api_log GROUP BY id / 1000;
INSERT INTO api_log_seen (kind, value, chunk)
SELECT DISTINCT 't'::"char", token_id, id / 1000 + 1 FROM api_log WHERE token_id IS NOT NULL
UNION SELECT DISTINCT 'u'::"char", user_id::text, id / 1000 + 1 FROM api_log WHERE user_id IS NOT NULL
UNION SELECT DISTINCT 'e'::"char", endpoint, id / 1000 + 1 FROM api_log
UNION SELECT DISTINCT 's'::"char", (status / 100)::text, id / 1000 + 1 FROM api_log;
SELECT setval(pg_get_serial_sequence('api_log_chunks', 'id'), coalesce((SELECT max(id) FROM api_log_chunks), 0) + 1, false);
DROP TABLE api_log;

-- The old table's name, a line a row, for whoever reads the log in SQL by hand (slow on a
-- large log: it parses every line). A server of the version before, still running during a
-- rolling upgrade, inserts into it too: each row it inserts becomes a chunk of one line.
CREATE VIEW api_log AS
SELECT c.id * 100000 + l.n AS id, (l.a->>0)::timestamptz AS time, l.a->>1 AS token_id, (l.a->>2)::integer AS user_id,
  l.a->>3 AS method, l.a->>4 AS endpoint, (l.a->>11)::integer AS endpoint_length, (l.a->>5)::integer AS status,
  l.a->>6 AS ip, (l.a->>7)::double precision AS duration_ms, l.a->>8 AS request_id, l.a->>9 AS error,
  (l.a->>10)::integer AS unlogged
FROM api_log_chunks c
CROSS JOIN LATERAL json_array_elements(('[' || replace(c.lines, E'\n', ',') || ']')::json) WITH ORDINALITY AS l(a, n)
WHERE json_typeof(l.a) = 'array';

CREATE FUNCTION api_log_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  made bigint;
BEGIN
  INSERT INTO api_log_chunks (first_time, last_time, line_count, lines)
  VALUES (NEW.time, NEW.time, 1, api_log_line(NEW.time, NEW.token_id, NEW.user_id, NEW.method, NEW.endpoint,
    NEW.endpoint_length, NEW.status, NEW.ip, NEW.duration_ms, NEW.request_id, NEW.error, NEW.unlogged))
  RETURNING id INTO made;
  INSERT INTO api_log_seen (kind, value, chunk)
  SELECT s.kind, s.value, made
  FROM (VALUES ('t'::"char", NEW.token_id), ('u', NEW.user_id::text), ('e', NEW.endpoint), ('s', (NEW.status / 100)::text))
    AS s(kind, value)
  WHERE s.value IS NOT NULL;
  RETURN NEW;
END $$;
CREATE TRIGGER api_log_insert INSTEAD OF INSERT ON api_log FOR EACH ROW EXECUTE FUNCTION api_log_insert();
