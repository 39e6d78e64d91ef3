-- The trigram index of migration 6 holds only pastes whose stored text is at most 2 MiB
-- (pg/owner-lists.ts, INDEXED_TEXT_BYTES): taking the trigrams of a text costs the insert time
-- in proportion, and a 64 MiB paste's took longer than DATABASE_TIMEOUT_MS, so its create was
-- refused. The few larger pastes are found for a search through an index of their own
-- and checked row by row: an index of each owner's texts by size, whose statistics also tell
-- PostgreSQL how few they are. Where migration 6 could not make the trigram index, nothing
-- else changes.
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_indexes WHERE indexname = 'pastes_owner_words') THEN
    DROP INDEX pastes_owner_words;
    CREATE INDEX pastes_owner_words ON pastes USING gin
      (owner_id, lower(title COLLATE "C") gin_trgm_ops, lower(content_json COLLATE "C") gin_trgm_ops)
      WHERE octet_length(content_json) <= 2097152;
    -- A partial index's statistics are not used for estimates, and the search decides between
    -- the index and a walk by PostgreSQL's estimate (pg/owner-lists.ts): the same statistics,
    -- kept for the whole table. PostgreSQL 13 has none of expressions, and estimates worse.
    IF current_setting('server_version_num')::int >= 140000 THEN
      EXECUTE 'CREATE STATISTICS pastes_title_words ON (lower(title COLLATE "C")) FROM pastes';
      EXECUTE 'CREATE STATISTICS pastes_text_words ON (lower(content_json COLLATE "C")) FROM pastes';
    END IF;
  END IF;
END $$;
CREATE INDEX pastes_owner_text_bytes ON pastes (owner_id, octet_length(content_json));
