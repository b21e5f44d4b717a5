-- Lease grants: the queue's leased rows without a scan of settle.attempts. Each claim
-- statement that leases at least one row inserts one grant: the lease's deadline and the
-- first and last claimed keys in due order (next_visible_at_ms, receipt_id). A live lease
-- lies inside the range of a live grant (lib/adapters/settlement-store.ts), so the leased
-- list reads range scans of attempts_due_idx per live grant. No index over a lease column
-- of settle.attempts: claims stay HOT updates (0017). The metric sampler deletes expired grants.
CREATE TABLE "settle"."lease_grants" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "settle"."lease_grants_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"lease_until_ms" bigint NOT NULL,
	"lo_next_visible_at_ms" bigint NOT NULL,
	"lo_receipt_id" text NOT NULL,
	"hi_next_visible_at_ms" bigint NOT NULL,
	"hi_receipt_id" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "lease_grants_until_idx" ON "settle"."lease_grants" USING btree ("lease_until_ms");
--> statement-breakpoint
-- Leases taken before this migration get their grants now (one per deadline, as
-- lib/db/sql/lease-grants.ts writes them); a lapsed one is deleted by the next sample.
INSERT INTO "settle"."lease_grants" ("lease_until_ms", "lo_next_visible_at_ms", "lo_receipt_id", "hi_next_visible_at_ms", "hi_receipt_id")
SELECT lo.lease_until_ms, lo.next_visible_at_ms, lo.receipt_id, hi.next_visible_at_ms, hi.receipt_id
FROM (SELECT DISTINCT ON (lease_until_ms) lease_until_ms, next_visible_at_ms, receipt_id FROM "settle"."attempts"
      WHERE lease_owner IS NOT NULL ORDER BY lease_until_ms, next_visible_at_ms, receipt_id) lo
JOIN (SELECT DISTINCT ON (lease_until_ms) lease_until_ms, next_visible_at_ms, receipt_id FROM "settle"."attempts"
      WHERE lease_owner IS NOT NULL ORDER BY lease_until_ms, next_visible_at_ms DESC, receipt_id DESC) hi USING (lease_until_ms);
