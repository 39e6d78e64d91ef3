-- Anonymous pastes (README, Anonymous pastes): their owner_id is 0, which no user has, and
-- each keeps the SHA-256 of the delete key its maker was given; null for every other paste.
ALTER TABLE pastes ADD COLUMN delete_key text CHECK (delete_key ~ '^[0-9a-f]{64}$');
