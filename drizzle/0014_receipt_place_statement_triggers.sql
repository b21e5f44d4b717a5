-- The one-place rule at batch size: settle.receipt_place stays the single authority
-- (its primary key is the rule), but inserts and deletes now keep it in step with one
-- statement-level trigger call per statement over its transition table, instead of one
-- trigger call (and one or two statements) per row. A worker recording 100 outcomes in
-- one statement pays one receipt_place delete for the batch, not 100.
-- The rename and truncate triggers of 0007 stay as they were: renames are rare, and
-- TRUNCATE has no transition table.

-- Writers wait while the triggers change hands, so no row is tracked twice or missed.
LOCK TABLE settle.attempts, settle.dead_letters IN ACCESS EXCLUSIVE MODE;
--> statement-breakpoint
DROP TRIGGER attempts_receipt_place ON settle.attempts;
--> statement-breakpoint
DROP TRIGGER dead_letters_receipt_place ON settle.dead_letters;
--> statement-breakpoint

-- TG_ARGV[0] is the table's place. A move within one statement (a CTE deletes the
-- attempt and inserts the dead letter) fires both tables' statement triggers at the
-- statement's end, in an order the rule must not depend on: when the insert's trigger
-- runs first, the receipt still reads as in the other place, so it takes the key over
-- only if the other table no longer holds the receipt as this transaction sees it
-- (a fresh snapshot per statement, so a concurrent committed holder is seen and wins);
-- the other trigger's delete then finds nothing of its place to remove.
-- Collisions are found with ON CONFLICT DO NOTHING, never an EXCEPTION block (a
-- subtransaction), and ON CONFLICT waits for a concurrent holder of the same key.
CREATE FUNCTION settle.track_receipt_places() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  this_place text := TG_ARGV[0];
  inserted bigint;
  wanted bigint;
  clashing text;
  held_place text;
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM settle.receipt_place p USING old_rows o WHERE p.receipt_id = o.receipt_id AND p.place = this_place;
    RETURN NULL;
  END IF;
  SELECT count(*) INTO wanted FROM new_rows;
  LOOP
    INSERT INTO settle.receipt_place (receipt_id, place)
      SELECT n.receipt_id, this_place FROM new_rows n ORDER BY n.receipt_id
      ON CONFLICT (receipt_id) DO NOTHING;
    GET DIAGNOSTICS inserted = ROW_COUNT;
    EXIT WHEN inserted = wanted;
    IF this_place = 'dead_lettered' THEN
      UPDATE settle.receipt_place p SET place = this_place FROM new_rows n
        WHERE p.receipt_id = n.receipt_id AND p.place <> this_place
          AND NOT EXISTS (SELECT 1 FROM settle.attempts a WHERE a.receipt_id = n.receipt_id);
    ELSE
      UPDATE settle.receipt_place p SET place = this_place FROM new_rows n
        WHERE p.receipt_id = n.receipt_id AND p.place <> this_place
          AND NOT EXISTS (SELECT 1 FROM settle.dead_letters d WHERE d.receipt_id = n.receipt_id);
    END IF;
    SELECT n.receipt_id, p.place INTO clashing, held_place
      FROM new_rows n LEFT JOIN settle.receipt_place p ON p.receipt_id = n.receipt_id
      WHERE p.place IS DISTINCT FROM this_place
      ORDER BY n.receipt_id LIMIT 1;
    EXIT WHEN NOT FOUND;
    IF held_place IS NOT NULL THEN
      RAISE EXCEPTION 'receipt % is already %; it cannot also be %', clashing,
          replace(held_place, '_', '-'), replace(this_place, '_', '-')
        USING ERRCODE = 'unique_violation', CONSTRAINT = 'receipt_place_pkey';
    END IF;
    -- A holder let go between the statements: insert what is still missing.
    SELECT count(*) INTO wanted FROM new_rows n
      WHERE NOT EXISTS (SELECT 1 FROM settle.receipt_place p WHERE p.receipt_id = n.receipt_id);
  END LOOP;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER attempts_receipt_place_inserted
  AFTER INSERT ON settle.attempts REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION settle.track_receipt_places('queued');
--> statement-breakpoint
CREATE TRIGGER attempts_receipt_place_deleted
  AFTER DELETE ON settle.attempts REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION settle.track_receipt_places('queued');
--> statement-breakpoint
CREATE TRIGGER dead_letters_receipt_place_inserted
  AFTER INSERT ON settle.dead_letters REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION settle.track_receipt_places('dead_lettered');
--> statement-breakpoint
CREATE TRIGGER dead_letters_receipt_place_deleted
  AFTER DELETE ON settle.dead_letters REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION settle.track_receipt_places('dead_lettered');
