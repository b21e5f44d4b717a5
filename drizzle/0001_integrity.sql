-- Rules the database itself enforces, beyond what the Drizzle schema can say.

-- The audit log is append-only: no role, not even Keel's own, may rewrite history.
CREATE FUNCTION keel.audit_event_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'keel.audit_event is append-only (% refused)', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER audit_event_no_update_delete
  BEFORE UPDATE OR DELETE ON keel.audit_event
  FOR EACH ROW EXECUTE FUNCTION keel.audit_event_append_only();
--> statement-breakpoint
CREATE TRIGGER audit_event_no_truncate
  BEFORE TRUNCATE ON keel.audit_event
  FOR EACH STATEMENT EXECUTE FUNCTION keel.audit_event_append_only();
--> statement-breakpoint

-- A receipt is queued or dead-lettered, never both. Both tables' writers take the
-- same per-receipt transaction lock before looking at the other table, so two
-- concurrent transactions cannot each miss the other's row.
CREATE FUNCTION settle.receipt_in_one_place() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('settle.receipt:' || NEW.receipt_id, 0));
  IF TG_TABLE_NAME = 'attempts' THEN
    IF EXISTS (SELECT 1 FROM settle.dead_letters WHERE receipt_id = NEW.receipt_id) THEN
      RAISE EXCEPTION 'receipt % is dead-lettered; it cannot also be queued', NEW.receipt_id
        USING ERRCODE = 'unique_violation', CONSTRAINT = 'receipt_in_one_place';
    END IF;
  ELSE
    IF EXISTS (SELECT 1 FROM settle.attempts WHERE receipt_id = NEW.receipt_id) THEN
      RAISE EXCEPTION 'receipt % is queued; it cannot also be dead-lettered', NEW.receipt_id
        USING ERRCODE = 'unique_violation', CONSTRAINT = 'receipt_in_one_place';
    END IF;
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER attempts_receipt_in_one_place
  BEFORE INSERT OR UPDATE OF receipt_id ON settle.attempts
  FOR EACH ROW EXECUTE FUNCTION settle.receipt_in_one_place();
--> statement-breakpoint
CREATE TRIGGER dead_letters_receipt_in_one_place
  BEFORE INSERT OR UPDATE OF receipt_id ON settle.dead_letters
  FOR EACH ROW EXECUTE FUNCTION settle.receipt_in_one_place();
--> statement-breakpoint

-- The store binding: 32 random bytes made once, when the schema is created (a hash
-- over three random UUIDs, so every byte is uniform without needing pgcrypto).
INSERT INTO settle.store_binding (singleton, binding)
VALUES (true, sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())));
