-- A password an admin handed out (the Users page) is temporary: the web asks its user for a
-- new one before anything else (README, Web pages). Existing passwords are their users' own.
ALTER TABLE users ADD COLUMN password_temporary boolean NOT NULL DEFAULT false;
