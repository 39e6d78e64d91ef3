-- Every committed change to a paste is announced on the channel 'pastes' with its hash
-- (sent at commit; nothing for a rolled-back one), whoever makes it: a server, the CLI, an
-- operator's own SQL. Each server drops that paste from its cache (pg/paste-cache.ts).
-- A fold of view counts (pg/views.ts) says so, and is announced as "<hash> <new count>":
-- a cache keeps the paste with the new count rather than reading it again.
-- A new row needs none: no server caches a paste it did not find.
CREATE FUNCTION announce_paste_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('pastes', OLD.hash);
  ELSIF current_setting('pastebin.view_fold', true) = 'on' THEN
    PERFORM pg_notify('pastes', NEW.hash || ' ' || NEW.view_count);
  ELSE
    PERFORM pg_notify('pastes', NEW.hash);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER pastes_announce AFTER UPDATE OR DELETE ON pastes
  FOR EACH ROW EXECUTE FUNCTION announce_paste_change();
