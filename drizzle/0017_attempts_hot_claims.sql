-- Claims as HOT updates. A claim writes only the lease columns, row_version and
-- updated_at_ms; attempts_lease_idx covered lease_until_ms (and lease_owner in its
-- predicate), so every claim was a non-HOT update that added an entry to each of the
-- seven indexes of settle.attempts and left a dead duplicate in the due index that
-- the next claims scanned past. With no index on a column a claim writes, a claim is
-- a heap-only tuple on the same page: no index entry at all.
-- The price: the queue's leased count and list scan the table (docs/performance.md,
-- "Settlement throughput").
DROP INDEX "settle"."attempts_lease_idx";
--> statement-breakpoint
-- A HOT update needs room on the row's own page, and a claimed row is larger than a
-- queued one (owner, token and deadline go from null to set); a drain claims whole
-- pages of consecutively queued rows in one statement. Applies to pages written from now on.
ALTER TABLE "settle"."attempts" SET (fillfactor = 50);
--> statement-breakpoint
-- Every write of a pending attempt (enqueue, a claim that found no room for a HOT
-- update) paid an entry in an index of all attempts by work_kind, read only by the
-- metric sampler's count of retry-scheduled rows: that index now holds those rows only.
DROP INDEX "settle"."attempts_kind_due_idx";
--> statement-breakpoint
CREATE INDEX "attempts_retry_due_idx" ON "settle"."attempts" USING btree ("next_visible_at_ms","receipt_id") WHERE "settle"."attempts"."work_kind" = 'retry_scheduled';
--> statement-breakpoint
-- Two history events per settlement (claimed, finished) each paid an entry in an
-- index by time read only by the metric sampler's recent retry_scheduled count.
DROP INDEX "keel"."settlement_event_at_idx";
--> statement-breakpoint
CREATE INDEX "settlement_event_retry_at_idx" ON "keel"."settlement_event" USING btree ("at_ms") WHERE "keel"."settlement_event"."kind" = 'retry_scheduled';
