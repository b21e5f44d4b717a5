-- Every dead-lettering by reason, for the metric sampler's keel_settlement_dead_lettered_total:
-- a count of history rows, which are never deleted, so it only grows (a replay or discard
-- takes a dead letter out of settle.dead_letters but leaves its dead_lettered event). Only
-- dead_lettered events pay an entry; the count is an index-only scan of this index.
CREATE INDEX "settlement_event_dead_lettered_idx" ON "keel"."settlement_event" USING btree ("reason_code") WHERE "keel"."settlement_event"."kind" = 'dead_lettered';
