-- The dead-letter list counts' indexes carry every column the dead-letter filters read, after
-- their ordering columns, so a capped count is an index-only scan instead of one heap visit per
-- row. Same names, same leading columns: the pages' orders are unchanged. settle.attempts keeps
-- its narrow indexes: no index there may cover a column a claim writes (0017, HOT claims).
DROP INDEX "settle"."dead_letters_recorded_idx";--> statement-breakpoint
CREATE INDEX "dead_letters_recorded_idx" ON "settle"."dead_letters" USING btree ("recorded_at_ms","receipt_id","reason","attempts");--> statement-breakpoint
DROP INDEX "settle"."dead_letters_reason_idx";--> statement-breakpoint
CREATE INDEX "dead_letters_reason_idx" ON "settle"."dead_letters" USING btree ("reason","recorded_at_ms","receipt_id","attempts");--> statement-breakpoint
DROP INDEX "settle"."dead_letters_attempts_idx";--> statement-breakpoint
CREATE INDEX "dead_letters_attempts_idx" ON "settle"."dead_letters" USING btree ("attempts","recorded_at_ms","receipt_id","reason");--> statement-breakpoint
DROP INDEX "settle"."dead_letters_receipt_prefix_idx";--> statement-breakpoint
CREATE INDEX "dead_letters_receipt_prefix_idx" ON "settle"."dead_letters" USING btree ("receipt_id" text_pattern_ops,"recorded_at_ms","reason","attempts");
