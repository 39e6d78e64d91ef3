-- Every committed change to a paste is announced on the channel 'pastes' with its hash
-- (sent at commit; nothing for a rolled-back one), whoever makes it: a server, the CLI, an
-- operator's own SQL. Each server drops that paste from its cache (pg/paste-cache.ts).
-- A new row needs none: no server caches a paste it did not find.
CREATE FUNCTION announce_paste_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('pastes', CASE WHEN TG_OP = 'DELETE' THEN OLD.hash ELSE NEW.hash END);
  RETURN NULL;
END
$$;

CREATE TRIGGER pastes_announce AFTER UPDATE OR DELETE ON pastes
  FOR EACH ROW EXECUTE FUNCTION announce_paste_change();
