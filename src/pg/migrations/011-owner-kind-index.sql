-- My pastes' search by language or visibility (pg/owner-lists.ts, candidates): each owner's
-- pastes by language and privacy, so a search that names them reads only those rows, where
-- the trigram index of migration 6 would hand it every paste holding the words. Small, and
-- quick to build: seconds for a million pastes.
CREATE INDEX pastes_owner_kind ON pastes (owner_id, language, privacy);
