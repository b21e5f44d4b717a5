ALTER TABLE "keel"."bulk_replay" ADD COLUMN "started_by_id" text;--> statement-breakpoint
ALTER TABLE "keel"."bulk_replay" ADD COLUMN "started_by_login" text;--> statement-breakpoint
ALTER TABLE "keel"."bulk_replay" ADD COLUMN "started_by_role" text;--> statement-breakpoint
CREATE INDEX "bulk_replay_item_result_idx" ON "keel"."bulk_replay_item" USING btree ("job","result","receipt_id");--> statement-breakpoint
ALTER TABLE "keel"."bulk_replay" ADD CONSTRAINT "bulk_replay_started_shape" CHECK (("keel"."bulk_replay"."started_at" is null) = ("keel"."bulk_replay"."started_by_id" is null)
        and ("keel"."bulk_replay"."started_by_id" is null) = ("keel"."bulk_replay"."started_by_login" is null)
        and ("keel"."bulk_replay"."started_by_id" is null) = ("keel"."bulk_replay"."started_by_role" is null));--> statement-breakpoint
ALTER TABLE "keel"."bulk_replay" ADD CONSTRAINT "bulk_replay_running_started" CHECK ("keel"."bulk_replay"."status" <> 'RUNNING' or "keel"."bulk_replay"."started_at" is not null);