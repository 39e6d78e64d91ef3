-- Each user's stored file bytes (README, Files: the account and admin Users pages show them,
-- and the quota is checked against them): only the pastes that hold files, by owner, so the
-- sum reads those rows and no other paste.
CREATE INDEX pastes_owner_files ON pastes (owner_id) WHERE files IS NOT NULL;
