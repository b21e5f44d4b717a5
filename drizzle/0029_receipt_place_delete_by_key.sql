-- The one-place rule's delete (drizzle/0014) finds each deleted row's place by its key. It
-- joined the transition table to settle.receipt_place, and the planner hashed the whole table
-- for that join whenever it held fewer than about 50,000 rows: a worker's batch of 100
-- outcomes scanned every queued and dead-lettered receipt (2.7 ms of a 4.7 ms batch
-- statement at 20,000 rows). An array of the deleted keys makes it an index scan of the
-- primary key at any size. The function is otherwise 0014's, unchanged.
CREATE OR REPLACE FUNCTION settle.track_receipt_places() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  this_place text := TG_ARGV[0];
  inserted bigint;
  wanted bigint;
  clashing text;
  held_place text;
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM settle.receipt_place p
      WHERE p.receipt_id = ANY (ARRAY(SELECT o.receipt_id FROM old_rows o)) AND p.place = this_place;
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
