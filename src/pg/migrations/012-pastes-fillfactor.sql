-- Room on each page of `pastes` for the rows' next versions (bench/README.md, "PostgreSQL
-- against the data folder"): every upkeep tick folds the view counts into the rows of the
-- pastes read (pg/views.ts). A new version that fits on its row's page is a HOT update, which touches no
-- index; one that does not fit goes elsewhere, and every index of the table takes a new entry
-- for it, the trigram index of migration 6 one per trigram of the text. New pages are filled
-- to 70 %; pages written before keep what they hold until `VACUUM FULL pastes` rewrites them.
ALTER TABLE pastes SET (fillfactor = 70);
