-- A receipt is queued or dead-lettered, never both: now kept by settle.receipt_place's
-- primary key instead of a per-receipt advisory lock. Those locks lived in the shared
-- lock table until commit, so one transaction writing more than a few thousand
-- attempts or dead letters failed with "out of shared memory".

-- Writers wait while the rule changes hands, so no row slips in between dropping the
-- old triggers and backfilling. Taken up front at the strength DROP TRIGGER needs, so
-- the lock is never upgraded midway.
LOCK TABLE settle.attempts, settle.dead_letters IN ACCESS EXCLUSIVE MODE;
--> statement-breakpoint
DROP TRIGGER attempts_receipt_in_one_place ON settle.attempts;
--> statement-breakpoint
DROP TRIGGER dead_letters_receipt_in_one_place ON settle.dead_letters;
--> statement-breakpoint
DROP FUNCTION settle.receipt_in_one_place();
--> statement-breakpoint

-- A receipt already in both tables fails this on the key, rather than being carried over.
INSERT INTO settle.receipt_place (receipt_id, place)
SELECT receipt_id, 'queued' FROM settle.attempts
UNION ALL
SELECT receipt_id, 'dead_lettered' FROM settle.dead_letters;
--> statement-breakpoint

-- Keeps receipt_place in step with one table; TG_ARGV[0] is that table's place.
-- AFTER row triggers run at the end of each statement, so a move (delete from one
-- table, then insert into the other) frees the key before claiming it again.
-- A collision is found with ON CONFLICT DO NOTHING rather than an EXCEPTION block:
-- that block is a subtransaction per row, which burns one transaction id per row
-- and overflows every snapshot's subtransaction cache on large batches. ON CONFLICT
-- still waits for a concurrent transaction holding the same key, then sees its row.
CREATE FUNCTION settle.track_receipt_place() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  this_place text := TG_ARGV[0];
  held_place text;
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    DELETE FROM settle.receipt_place WHERE place = this_place;
    RETURN NULL;
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    DELETE FROM settle.receipt_place WHERE receipt_id = OLD.receipt_id AND place = this_place;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    LOOP
      INSERT INTO settle.receipt_place (receipt_id, place) VALUES (NEW.receipt_id, this_place)
        ON CONFLICT (receipt_id) DO NOTHING;
      EXIT WHEN FOUND;
      SELECT place INTO held_place FROM settle.receipt_place WHERE receipt_id = NEW.receipt_id;
      IF FOUND THEN
        RAISE EXCEPTION 'receipt % is already %; it cannot also be %', NEW.receipt_id,
            replace(held_place, '_', '-'), replace(this_place, '_', '-')
          USING ERRCODE = 'unique_violation', CONSTRAINT = 'receipt_place_pkey';
      END IF;
      -- The holder committed its delete between the two statements: try again.
    END LOOP;
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER attempts_receipt_place
  AFTER INSERT OR DELETE ON settle.attempts
  FOR EACH ROW EXECUTE FUNCTION settle.track_receipt_place('queued');
--> statement-breakpoint
-- A separate trigger so an UPDATE that leaves receipt_id as it was costs nothing.
CREATE TRIGGER attempts_receipt_place_renamed
  AFTER UPDATE OF receipt_id ON settle.attempts
  FOR EACH ROW WHEN (OLD.receipt_id IS DISTINCT FROM NEW.receipt_id)
  EXECUTE FUNCTION settle.track_receipt_place('queued');
--> statement-breakpoint
CREATE TRIGGER attempts_receipt_place_truncated
  AFTER TRUNCATE ON settle.attempts
  FOR EACH STATEMENT EXECUTE FUNCTION settle.track_receipt_place('queued');
--> statement-breakpoint
CREATE TRIGGER dead_letters_receipt_place
  AFTER INSERT OR DELETE ON settle.dead_letters
  FOR EACH ROW EXECUTE FUNCTION settle.track_receipt_place('dead_lettered');
--> statement-breakpoint
CREATE TRIGGER dead_letters_receipt_place_renamed
  AFTER UPDATE OF receipt_id ON settle.dead_letters
  FOR EACH ROW WHEN (OLD.receipt_id IS DISTINCT FROM NEW.receipt_id)
  EXECUTE FUNCTION settle.track_receipt_place('dead_lettered');
--> statement-breakpoint
CREATE TRIGGER dead_letters_receipt_place_truncated
  AFTER TRUNCATE ON settle.dead_letters
  FOR EACH STATEMENT EXECUTE FUNCTION settle.track_receipt_place('dead_lettered');
