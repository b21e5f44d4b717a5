-- The receipt id prefix index carries next_visible_at_ms after receipt_id, so the queue's due
-- and retry counts under a prefix filter are index-only scans instead of one heap visit per
-- row (3,896 heap pages for a prefix of 3,863 rows at a million attempts). Claims stay HOT
-- updates (0017): a claim never writes next_visible_at_ms; the outcomes that do (a retry, a
-- replay) already change attempts_due_idx, so they were never HOT.
DROP INDEX "settle"."attempts_receipt_prefix_idx";--> statement-breakpoint
CREATE INDEX "attempts_receipt_prefix_idx" ON "settle"."attempts" USING btree ("receipt_id" text_pattern_ops,"next_visible_at_ms");
