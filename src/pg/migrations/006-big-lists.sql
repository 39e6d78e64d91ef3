-- Indexes for the lists that would otherwise read a whole table (bench/README.md, "Large
-- installs on PostgreSQL").

-- The API log's filters, each newest first, so a filter that matches only old lines walks its
-- own index instead of every newer line (pg/api-log-query.ts). The status filter asks for a
-- class (4xx), which the query also writes as status / 100.
CREATE INDEX api_log_user ON api_log (user_id, id DESC) WHERE user_id IS NOT NULL;
CREATE INDEX api_log_endpoint ON api_log (endpoint, id DESC);
CREATE INDEX api_log_status_class ON api_log ((status / 100), id DESC);

-- My pastes' search (pg/owner-lists.ts, candidates): the trigrams of each paste's title and
-- stored text, lowercased as the query's LIKE patterns are, beside the owner, so a word finds
-- the owner's pastes that hold it without reading the rest. It needs the contrib extensions
-- pg_trgm and btree_gin; where they cannot be made (not installed, or a role without the
-- CREATE privilege on the database) the search still works, reading all the owner's pastes.
DO $$
BEGIN
  CREATE EXTENSION IF NOT EXISTS pg_trgm;
  CREATE EXTENSION IF NOT EXISTS btree_gin;
EXCEPTION WHEN insufficient_privilege OR undefined_file OR feature_not_supported THEN
  RAISE WARNING 'My pastes search: no trigram index (%); a search reads all of a user''s pastes', SQLERRM;
END $$;
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_extension WHERE extname = 'pg_trgm')
     AND EXISTS (SELECT FROM pg_extension WHERE extname = 'btree_gin') THEN
    CREATE INDEX pastes_owner_words ON pastes USING gin
      (owner_id, lower(title COLLATE "C") gin_trgm_ops, lower(content_json COLLATE "C") gin_trgm_ops);
  END IF;
END $$;
