-- A fold of view counts (pg/views.ts) announces its pastes' new counts itself, a few hundred
-- to a notification ("+<hash> <count> <hash> <count> ..."), instead of one notification a
-- row: at every upkeep tick a busy server folds thousands. The trigger stays silent for a
-- fold that says so (`pastebin.view_fold` = 'batched'); a server of the version before, still
-- running during a rolling upgrade, says 'on' and is announced a row at a time, as before.
CREATE OR REPLACE FUNCTION announce_paste_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('pastes', OLD.hash);
  ELSIF current_setting('pastebin.view_fold', true) = 'batched' THEN
    NULL;
  ELSIF current_setting('pastebin.view_fold', true) = 'on' THEN
    PERFORM pg_notify('pastes', NEW.hash || ' ' || NEW.view_count);
  ELSE
    PERFORM pg_notify('pastes', NEW.hash);
  END IF;
  RETURN NULL;
END
$$;
