-- The list counts' indexes carry every column the queue and dead-letter filters and the queue
-- states read, after their ordering columns, so a capped count is an index-only scan instead of
-- one heap visit per row. Same names, same leading columns: the claim's and the pages' orders
-- are unchanged.
DROP INDEX "settle"."attempts_due_idx";--> statement-breakpoint
CREATE INDEX "attempts_due_idx" ON "settle"."attempts" USING btree ("next_visible_at_ms","receipt_id","lease_until_ms","lease_owner","attempts","reason_code");--> statement-breakpoint
DROP INDEX "settle"."attempts_reason_idx";--> statement-breakpoint
CREATE INDEX "attempts_reason_idx" ON "settle"."attempts" USING btree ("reason_code","next_visible_at_ms","receipt_id","lease_until_ms","lease_owner","attempts");--> statement-breakpoint
DROP INDEX "settle"."attempts_attempts_due_idx";--> statement-breakpoint
CREATE INDEX "attempts_attempts_due_idx" ON "settle"."attempts" USING btree ("attempts","next_visible_at_ms","receipt_id","lease_until_ms","lease_owner","reason_code");--> statement-breakpoint
DROP INDEX "settle"."dead_letters_recorded_idx";--> statement-breakpoint
CREATE INDEX "dead_letters_recorded_idx" ON "settle"."dead_letters" USING btree ("recorded_at_ms","receipt_id","reason","attempts");--> statement-breakpoint
DROP INDEX "settle"."dead_letters_reason_idx";--> statement-breakpoint
CREATE INDEX "dead_letters_reason_idx" ON "settle"."dead_letters" USING btree ("reason","recorded_at_ms","receipt_id","attempts");--> statement-breakpoint
DROP INDEX "settle"."dead_letters_attempts_idx";--> statement-breakpoint
CREATE INDEX "dead_letters_attempts_idx" ON "settle"."dead_letters" USING btree ("attempts","recorded_at_ms","receipt_id","reason");;--> statement-breakpoint
DROP INDEX "settle"."attempts_receipt_prefix_idx";--> statement-breakpoint
CREATE INDEX "attempts_receipt_prefix_idx" ON "settle"."attempts" USING btree ("receipt_id" text_pattern_ops,"next_visible_at_ms","lease_until_ms","lease_owner","attempts","reason_code");--> statement-breakpoint
DROP INDEX "settle"."dead_letters_receipt_prefix_idx";--> statement-breakpoint
CREATE INDEX "dead_letters_receipt_prefix_idx" ON "settle"."dead_letters" USING btree ("receipt_id" text_pattern_ops,"recorded_at_ms","reason","attempts");
