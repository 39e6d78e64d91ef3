-- The API log's chunks compressed with LZ4 instead of PostgreSQL's own pglz (bench/README.md,
-- "PostgreSQL against the data folder"): a chunk of a thousand lines is compressed as it is
-- inserted, dozens of times a second under load, and pglz was PostgreSQL's busiest function
-- then. Chunks written before keep pglz; both read back alike. SET COMPRESSION came with
-- PostgreSQL 14, and a server built without LZ4 refuses it: both keep pglz, with a notice.
DO $$
BEGIN
  IF current_setting('server_version_num')::int < 140000 THEN
    RAISE NOTICE 'api_log_chunks keeps pglz: PostgreSQL 14 or newer compresses with LZ4';
    RETURN;
  END IF;
  EXECUTE 'ALTER TABLE api_log_chunks ALTER COLUMN lines SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'api_log_chunks keeps pglz: this PostgreSQL was built without LZ4';
END
$$;
