-- Outgoing webhooks (the outbox): an event and one delivery per enabled endpoint,
-- written by the transaction that made the change. Free text (notes, reasons) is cut
-- to 280 characters; nothing secret (owner tokens, evidence, checkpoint keys) is copied.
CREATE FUNCTION keel.webhook_enqueue(p_kind text, p_subject text, p_payload jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  event_id bigint;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM keel.webhook_endpoint WHERE enabled) THEN
    RETURN;
  END IF;
  INSERT INTO keel.webhook_event (kind, subject, payload) VALUES (p_kind, p_subject, p_payload) RETURNING id INTO event_id;
  INSERT INTO keel.webhook_delivery (event_id, endpoint)
    SELECT event_id, name FROM keel.webhook_endpoint WHERE enabled ORDER BY name;
END;
$$;
--> statement-breakpoint
CREATE FUNCTION keel.recovery_proposal_webhook() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  kind text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    kind := 'proposal.created';
  ELSIF NEW.status IS DISTINCT FROM OLD.status THEN
    kind := CASE NEW.status
      WHEN 'APPROVED' THEN 'proposal.decided'
      WHEN 'REJECTED' THEN 'proposal.decided'
      WHEN 'SUPERSEDED' THEN 'proposal.superseded'
      WHEN 'EXPIRED' THEN 'proposal.expired'
      WHEN 'CANCELLED' THEN 'proposal.cancelled'
    END;
  END IF;
  IF kind IS NULL THEN
    RETURN NULL;
  END IF;
  PERFORM keel.webhook_enqueue(kind, 'proposal:' || NEW.id, jsonb_strip_nulls(jsonb_build_object(
    'proposalId', NEW.id,
    'proposalKind', NEW.kind,
    'status', NEW.status,
    'targetKind', NEW.target_kind,
    'targetId', NEW.target_id,
    'proposer', NEW.proposer_login,
    'note', left(NEW.proposer_note, 280),
    'deadline', to_char(NEW.wait_deadline AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'decider', NEW.decider_login,
    'decidedAt', to_char(NEW.decided_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'resultingStatus', NEW.resulting_status,
    'reason', left(NEW.reason, 280),
    'path', '/recovery/' || NEW.id
  )));
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER recovery_proposal_webhook AFTER INSERT OR UPDATE OF status ON keel.recovery_proposal
  FOR EACH ROW EXECUTE FUNCTION keel.recovery_proposal_webhook();
--> statement-breakpoint
CREATE FUNCTION keel.bulk_replay_webhook() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  results jsonb;
BEGIN
  IF NOT (NEW.status = 'COMPLETED' OR (NEW.status = 'CANCELLED' AND OLD.status = 'RUNNING')) THEN
    RETURN NULL;
  END IF;
  SELECT coalesce(jsonb_object_agg(r.result, r.n), '{}'::jsonb) INTO results
    FROM (SELECT coalesce(result, 'not_processed') AS result, count(*) AS n
            FROM keel.bulk_replay_item WHERE job = NEW.id GROUP BY 1) AS r;
  PERFORM keel.webhook_enqueue(
    CASE NEW.status WHEN 'COMPLETED' THEN 'bulk_replay.finished' ELSE 'bulk_replay.cancelled' END,
    'bulk_replay:' || NEW.id,
    jsonb_strip_nulls(jsonb_build_object(
      'jobId', NEW.id,
      'status', NEW.status,
      'itemCount', NEW.item_count,
      'processedCount', NEW.processed_count,
      'startedBy', NEW.started_by_login,
      'note', left(NEW.note, 280),
      'results', results,
      'path', '/settlements/bulk/' || NEW.id
    )));
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER bulk_replay_webhook AFTER UPDATE OF status ON keel.bulk_replay
  FOR EACH ROW EXECUTE FUNCTION keel.bulk_replay_webhook();
--> statement-breakpoint
CREATE TRIGGER webhook_delivery_notify AFTER INSERT OR UPDATE ON keel.webhook_delivery
  FOR EACH STATEMENT EXECUTE FUNCTION keel.notify_change();
