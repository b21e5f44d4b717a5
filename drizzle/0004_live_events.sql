-- Live updates: every write to a table the console shows notifies channel
-- keel_events with the table's name. Statement-level, so a bulk update sends one
-- notification, and Postgres folds identical notifications within a transaction.
-- Runtime-owned oxide_batch tables get no trigger; the server polls them instead.
CREATE FUNCTION keel.notify_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('keel_events', TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER recovery_proposal_notify AFTER INSERT OR UPDATE OR DELETE ON keel.recovery_proposal
  FOR EACH STATEMENT EXECUTE FUNCTION keel.notify_change();
--> statement-breakpoint
CREATE TRIGGER audit_event_notify AFTER INSERT ON keel.audit_event
  FOR EACH STATEMENT EXECUTE FUNCTION keel.notify_change();
--> statement-breakpoint
CREATE TRIGGER durable_checkpoint_notify AFTER INSERT OR UPDATE OR DELETE ON keel.durable_checkpoint
  FOR EACH STATEMENT EXECUTE FUNCTION keel.notify_change();
--> statement-breakpoint
CREATE TRIGGER bulk_replay_notify AFTER INSERT OR UPDATE OR DELETE ON keel.bulk_replay
  FOR EACH STATEMENT EXECUTE FUNCTION keel.notify_change();
--> statement-breakpoint
CREATE TRIGGER settlement_replay_notify AFTER INSERT ON keel.settlement_replay
  FOR EACH STATEMENT EXECUTE FUNCTION keel.notify_change();
--> statement-breakpoint
CREATE TRIGGER metric_sample_notify AFTER INSERT ON keel.metric_sample
  FOR EACH STATEMENT EXECUTE FUNCTION keel.notify_change();
--> statement-breakpoint
CREATE TRIGGER user_notify AFTER INSERT OR UPDATE OR DELETE ON keel."user"
  FOR EACH STATEMENT EXECUTE FUNCTION keel.notify_change();
--> statement-breakpoint
CREATE TRIGGER attempts_notify AFTER INSERT OR UPDATE OR DELETE ON settle.attempts
  FOR EACH STATEMENT EXECUTE FUNCTION keel.notify_change();
--> statement-breakpoint
CREATE TRIGGER dead_letters_notify AFTER INSERT OR UPDATE OR DELETE ON settle.dead_letters
  FOR EACH STATEMENT EXECUTE FUNCTION keel.notify_change();
