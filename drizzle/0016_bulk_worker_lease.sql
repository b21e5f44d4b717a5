ALTER TABLE "keel"."bulk_replay" ADD COLUMN "worker_instance" text;--> statement-breakpoint
ALTER TABLE "keel"."bulk_replay" ADD COLUMN "worker_lease_until" timestamp with time zone;
