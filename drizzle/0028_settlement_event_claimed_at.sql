-- A claim is written with the outcome it led to (claimed_at_ms on finished, retry_scheduled
-- and dead_lettered events), and a claim that ends without one as its own `claimed` event
-- when the receipt is claimed again or requeued: one history row per settlement where there
-- were two (docs/design.md, "Settlement history"). Events written before keep their
-- `claimed` rows and a null claim time. The CHECK is added NOT VALID: every existing row has
-- the new column null, which it allows, so there is nothing to check, and the migration
-- (one transaction) does not scan the history under its lock.
ALTER TABLE "keel"."settlement_event" ADD COLUMN "claimed_at_ms" bigint;--> statement-breakpoint
ALTER TABLE "keel"."settlement_event" ADD CONSTRAINT "settlement_event_claimed_at_outcome" CHECK ("keel"."settlement_event"."claimed_at_ms" is null or "keel"."settlement_event"."kind" in ('finished', 'retry_scheduled', 'dead_lettered')) NOT VALID;
