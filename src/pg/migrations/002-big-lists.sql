-- Indexes for the lists that would otherwise read a whole table (bench/README.md, "Large
-- installs on PostgreSQL").

-- The API log's filters, each newest first, so a filter that matches only old lines walks its
-- own index instead of every newer line (pg/api-log-query.ts). The status filter asks for a
-- class (4xx), which the query also writes as status / 100.
CREATE INDEX api_log_user ON api_log (user_id, id DESC) WHERE user_id IS NOT NULL;
CREATE INDEX api_log_endpoint ON api_log (endpoint, id DESC);
CREATE INDEX api_log_status_class ON api_log ((status / 100), id DESC);
