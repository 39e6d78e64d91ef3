-- Pastes their client encrypted (README, Encrypted pastes): the content is an envelope the
-- server cannot read, kept and sent as it is. A kept revision has the flag in its fields.
ALTER TABLE pastes ADD COLUMN encrypted boolean NOT NULL DEFAULT false;
