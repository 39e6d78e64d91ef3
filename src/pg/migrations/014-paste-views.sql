-- View counts folded in beside the pastes instead of into their rows (pg/views.ts;
-- bench/README.md, "PostgreSQL against the data folder"). Every upkeep tick folds the views of
-- every paste read into a row: in `pastes` that wrote a new version of the whole row (its text
-- up to 2 kB, inline), fired the announcing trigger, and now and then a trigram index entry a
-- trigram of the text, which was most of PostgreSQL's work under a read load. A paste's count
-- is now `pastes.view_count` and the `views` of its row here, added together on every read
-- (pg/paste-row.ts). A row of `pastes` written from a paste record moves its own count by what
-- that record changed (pg/pastes.ts), and the views folded here meanwhile stay.
-- A paste's first fold makes its row here, holding the paste's row meanwhile (KEY SHARE) so
-- that it cannot be deleted or burned before: a paste made costs nothing more.
CREATE TABLE paste_views (
  hash text PRIMARY KEY,
  views bigint NOT NULL CHECK (views >= 0)
) WITH (fillfactor = 70);

-- Whoever deletes a paste (a server, the CLI, an operator's SQL, a server of the version before
-- during a rolling upgrade), its row here goes with it.
CREATE FUNCTION paste_views_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM paste_views v USING gone WHERE v.hash = gone.hash;
  RETURN NULL;
END
$$;
CREATE TRIGGER pastes_views_gone AFTER DELETE ON pastes
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION paste_views_gone();

-- A burned paste's count stops at its reading: its folded views join its row, and the row here
-- goes, so no fold adds to it after. The delete waits for a fold holding the row, and takes
-- what that fold added.
CREATE FUNCTION paste_views_burned() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  folded bigint;
BEGIN
  DELETE FROM paste_views WHERE hash = NEW.hash RETURNING views INTO folded;
  NEW.view_count := NEW.view_count + coalesce(folded, 0);
  RETURN NEW;
END
$$;
CREATE TRIGGER pastes_views_burned BEFORE UPDATE ON pastes
  FOR EACH ROW WHEN (NEW.burned AND NOT OLD.burned) EXECUTE FUNCTION paste_views_burned();

-- A server of the version before folds into `pastes.view_count` and may announce a row's count
-- ('on'): the count it announces is the paste's whole count, as a fold of this version's.
CREATE OR REPLACE FUNCTION announce_paste_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('pastes', OLD.hash);
  ELSIF current_setting('pastebin.view_fold', true) = 'batched' THEN
    NULL;
  ELSIF current_setting('pastebin.view_fold', true) = 'on' THEN
    PERFORM pg_notify('pastes', NEW.hash || ' ' ||
      (NEW.view_count + coalesce((SELECT views FROM paste_views WHERE hash = NEW.hash), 0)));
  ELSE
    PERFORM pg_notify('pastes', NEW.hash);
  END IF;
  RETURN NULL;
END
$$;
