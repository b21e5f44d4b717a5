ALTER TABLE "keel"."bulk_replay" DROP CONSTRAINT "bulk_replay_action";--> statement-breakpoint
ALTER TABLE "keel"."bulk_replay_item" DROP CONSTRAINT "bulk_replay_item_result";--> statement-breakpoint
ALTER TABLE "keel"."bulk_replay_item" ADD COLUMN "row_version" bigint;--> statement-breakpoint
ALTER TABLE "keel"."bulk_replay" ADD CONSTRAINT "bulk_replay_action" CHECK ("keel"."bulk_replay"."action" in ('REPLAY', 'DISCARD', 'REQUEUE'));--> statement-breakpoint
ALTER TABLE "keel"."bulk_replay_item" ADD CONSTRAINT "bulk_replay_item_result" CHECK ("keel"."bulk_replay_item"."result" is null or "keel"."bulk_replay_item"."result" in ('replayed', 'discarded', 'requeued', 'already_replayed', 'no_longer_dead_lettered', 'no_longer_retry_scheduled', 'changed_since_preview', 'cancelled'));