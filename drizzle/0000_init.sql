CREATE SCHEMA IF NOT EXISTS "settle";
--> statement-breakpoint
CREATE SCHEMA IF NOT EXISTS "keel";
--> statement-breakpoint
CREATE TABLE "settle"."attempts" (
	"receipt_id" text PRIMARY KEY NOT NULL,
	"finalized_at" bigint NOT NULL,
	"work_kind" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_visible_at_ms" bigint NOT NULL,
	"row_version" bigint DEFAULT 0 NOT NULL,
	"lease_owner" text,
	"lease_token" text,
	"lease_until_ms" bigint,
	"reason_code" text,
	"reason_detail_sha256" "bytea",
	"updated_at_ms" bigint NOT NULL,
	CONSTRAINT "attempts_work_kind" CHECK ("settle"."attempts"."work_kind" in ('pending_observation', 'retry_scheduled')),
	CONSTRAINT "attempts_attempts_nonnegative" CHECK ("settle"."attempts"."attempts" >= 0),
	CONSTRAINT "attempts_row_version_nonnegative" CHECK ("settle"."attempts"."row_version" >= 0),
	CONSTRAINT "attempts_lease_complete" CHECK (("settle"."attempts"."lease_owner" is null and "settle"."attempts"."lease_token" is null and "settle"."attempts"."lease_until_ms" is null)
        or ("settle"."attempts"."lease_owner" is not null and "settle"."attempts"."lease_token" is not null and "settle"."attempts"."lease_until_ms" is not null)),
	CONSTRAINT "attempts_detail_sha256_length" CHECK ("settle"."attempts"."reason_detail_sha256" is null or octet_length("settle"."attempts"."reason_detail_sha256") = 32)
);
--> statement-breakpoint
CREATE TABLE "settle"."dead_letters" (
	"receipt_id" text PRIMARY KEY NOT NULL,
	"finalized_at" bigint NOT NULL,
	"attempts" integer NOT NULL,
	"reason" text NOT NULL,
	"canonical_json" text NOT NULL,
	"recorded_at_ms" bigint NOT NULL,
	CONSTRAINT "dead_letters_attempts_nonnegative" CHECK ("settle"."dead_letters"."attempts" >= 0)
);
--> statement-breakpoint
CREATE TABLE "settle"."store_binding" (
	"singleton" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"binding" "bytea" NOT NULL,
	CONSTRAINT "store_binding_singleton" CHECK ("settle"."store_binding"."singleton"),
	CONSTRAINT "store_binding_length" CHECK (octet_length("settle"."store_binding"."binding") = 32)
);
--> statement-breakpoint
CREATE TABLE "keel"."audit_event" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "keel"."audit_event_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"at" timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
	"actor_id" text,
	"actor_login" text NOT NULL,
	"actor_role" text NOT NULL,
	"action" text NOT NULL,
	"target_kind" text NOT NULL,
	"target_id" text NOT NULL,
	"reason" text,
	"before" jsonb,
	"after" jsonb,
	"digest" text,
	"operation_id" text,
	"outcome" text NOT NULL,
	"code" text,
	"request_id" text,
	CONSTRAINT "audit_event_outcome" CHECK ("keel"."audit_event"."outcome" in ('APPLIED', 'REFUSED')),
	CONSTRAINT "audit_event_code_shape" CHECK (("keel"."audit_event"."outcome" = 'REFUSED') = ("keel"."audit_event"."code" is not null))
);
--> statement-breakpoint
CREATE TABLE "keel"."bulk_replay" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "keel"."bulk_replay_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"created_by_id" text NOT NULL,
	"created_by_login" text NOT NULL,
	"note" text NOT NULL,
	"filter" jsonb NOT NULL,
	"status" text DEFAULT 'PREVIEWED' NOT NULL,
	"item_count" integer NOT NULL,
	"processed_count" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"cancelled_at" timestamp with time zone,
	CONSTRAINT "bulk_replay_status" CHECK ("keel"."bulk_replay"."status" in ('PREVIEWED', 'RUNNING', 'CANCELLED', 'COMPLETED')),
	CONSTRAINT "bulk_replay_counts" CHECK ("keel"."bulk_replay"."processed_count" >= 0 and "keel"."bulk_replay"."processed_count" <= "keel"."bulk_replay"."item_count")
);
--> statement-breakpoint
CREATE TABLE "keel"."bulk_replay_item" (
	"job" bigint NOT NULL,
	"receipt_id" text NOT NULL,
	"recorded_at_ms" bigint NOT NULL,
	"result" text,
	"processed_at" timestamp with time zone,
	CONSTRAINT "bulk_replay_item_job_receipt_id_pk" PRIMARY KEY("job","receipt_id"),
	CONSTRAINT "bulk_replay_item_result" CHECK ("keel"."bulk_replay_item"."result" is null or "keel"."bulk_replay_item"."result" in ('replayed', 'already_replayed', 'no_longer_dead_lettered', 'changed_since_preview', 'cancelled'))
);
--> statement-breakpoint
CREATE TABLE "keel"."durable_checkpoint" (
	"execution_id" text PRIMARY KEY NOT NULL,
	"checkpoint" jsonb NOT NULL,
	"authentication_tag" text NOT NULL,
	"lease_owner" text NOT NULL,
	"fencing_token" bigint NOT NULL,
	"lease_expires_at_ms" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "durable_checkpoint_token_positive" CHECK ("keel"."durable_checkpoint"."fencing_token" > 0)
);
--> statement-breakpoint
CREATE TABLE "keel"."meta" (
	"key" text PRIMARY KEY NOT NULL,
	"value" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "keel"."metric_sample" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "keel"."metric_sample_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"sampled_at" timestamp with time zone NOT NULL,
	"metric" text NOT NULL,
	"label" text DEFAULT '' NOT NULL,
	"value" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "keel"."recovery_proposal" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "keel"."recovery_proposal_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"target_kind" text NOT NULL,
	"target_id" text NOT NULL,
	"evidence_digest" "bytea" NOT NULL,
	"evidence" jsonb NOT NULL,
	"expected_version" bigint,
	"expected_fencing_token" bigint,
	"successor_owner" text,
	"proposer_id" text NOT NULL,
	"proposer_login" text NOT NULL,
	"proposer_note" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"status" text DEFAULT 'PENDING' NOT NULL,
	"decider_id" text,
	"decider_login" text,
	"decided_at" timestamp with time zone,
	"resulting_status" text,
	"failure_category" text,
	"reason_code" text,
	"reason" text,
	"wait_owner" text NOT NULL,
	"wait_deadline" timestamp with time zone NOT NULL,
	"wait_cancellation_id" text NOT NULL,
	CONSTRAINT "recovery_proposal_target_kind" CHECK ("keel"."recovery_proposal"."target_kind" in ('batch', 'orchestration')),
	CONSTRAINT "recovery_proposal_status" CHECK ("keel"."recovery_proposal"."status" in ('PENDING', 'APPROVED', 'REJECTED', 'EXPIRED', 'SUPERSEDED', 'CANCELLED')),
	CONSTRAINT "recovery_proposal_digest_length" CHECK (octet_length("keel"."recovery_proposal"."evidence_digest") = 32),
	CONSTRAINT "recovery_proposal_decided_shape" CHECK (("keel"."recovery_proposal"."status" = 'PENDING') = ("keel"."recovery_proposal"."decided_at" is null))
);
--> statement-breakpoint
CREATE TABLE "keel"."settlement_event" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "keel"."settlement_event_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"receipt_id" text NOT NULL,
	"kind" text NOT NULL,
	"attempt" integer NOT NULL,
	"reason_code" text,
	"at_ms" bigint NOT NULL,
	CONSTRAINT "settlement_event_kind" CHECK ("keel"."settlement_event"."kind" in ('claimed', 'retry_scheduled', 'dead_lettered', 'replayed', 'finished', 'discarded', 'requeued'))
);
--> statement-breakpoint
CREATE TABLE "keel"."settlement_replay" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "keel"."settlement_replay_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"receipt_id" text NOT NULL,
	"prior_attempts" integer NOT NULL,
	"prior_reason" text NOT NULL,
	"actor_id" text NOT NULL,
	"actor_login" text NOT NULL,
	"note" text NOT NULL,
	"operation_id" text NOT NULL,
	"bulk_job" bigint,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "keel"."account" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"provider_id" text NOT NULL,
	"user_id" text NOT NULL,
	"access_token" text,
	"refresh_token" text,
	"id_token" text,
	"access_token_expires_at" timestamp with time zone,
	"refresh_token_expires_at" timestamp with time zone,
	"scope" text,
	"password" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "keel"."rate_limit" (
	"id" text PRIMARY KEY NOT NULL,
	"key" text NOT NULL,
	"count" integer NOT NULL,
	"last_request" bigint NOT NULL,
	CONSTRAINT "rate_limit_key_unique" UNIQUE("key")
);
--> statement-breakpoint
CREATE TABLE "keel"."session" (
	"id" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"token" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ip_address" text,
	"user_agent" text,
	"user_id" text NOT NULL,
	"impersonated_by" text,
	CONSTRAINT "session_token_unique" UNIQUE("token")
);
--> statement-breakpoint
CREATE TABLE "keel"."user" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"email_verified" boolean DEFAULT false NOT NULL,
	"image" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"username" text,
	"display_username" text,
	"role" text DEFAULT 'viewer' NOT NULL,
	"banned" boolean DEFAULT false,
	"ban_reason" text,
	"ban_expires" timestamp with time zone,
	CONSTRAINT "user_email_unique" UNIQUE("email"),
	CONSTRAINT "user_username_unique" UNIQUE("username")
);
--> statement-breakpoint
CREATE TABLE "keel"."verification" (
	"id" text PRIMARY KEY NOT NULL,
	"identifier" text NOT NULL,
	"value" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "keel"."bulk_replay_item" ADD CONSTRAINT "bulk_replay_item_job_bulk_replay_id_fk" FOREIGN KEY ("job") REFERENCES "keel"."bulk_replay"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "keel"."settlement_replay" ADD CONSTRAINT "settlement_replay_bulk_job_bulk_replay_id_fk" FOREIGN KEY ("bulk_job") REFERENCES "keel"."bulk_replay"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "keel"."account" ADD CONSTRAINT "account_user_id_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "keel"."user"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "keel"."session" ADD CONSTRAINT "session_user_id_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "keel"."user"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "attempts_due_idx" ON "settle"."attempts" USING btree ("next_visible_at_ms","receipt_id");--> statement-breakpoint
CREATE INDEX "attempts_kind_due_idx" ON "settle"."attempts" USING btree ("work_kind","next_visible_at_ms","receipt_id");--> statement-breakpoint
CREATE INDEX "attempts_lease_idx" ON "settle"."attempts" USING btree ("lease_until_ms","receipt_id") WHERE "settle"."attempts"."lease_owner" is not null;--> statement-breakpoint
CREATE INDEX "attempts_reason_idx" ON "settle"."attempts" USING btree ("reason_code","next_visible_at_ms","receipt_id");--> statement-breakpoint
CREATE INDEX "dead_letters_recorded_idx" ON "settle"."dead_letters" USING btree ("recorded_at_ms","receipt_id");--> statement-breakpoint
CREATE INDEX "dead_letters_reason_idx" ON "settle"."dead_letters" USING btree ("reason","recorded_at_ms","receipt_id");--> statement-breakpoint
CREATE INDEX "dead_letters_attempts_idx" ON "settle"."dead_letters" USING btree ("attempts","recorded_at_ms","receipt_id");--> statement-breakpoint
CREATE INDEX "audit_event_at_idx" ON "keel"."audit_event" USING btree ("at","id");--> statement-breakpoint
CREATE INDEX "audit_event_actor_idx" ON "keel"."audit_event" USING btree ("actor_login","at","id");--> statement-breakpoint
CREATE INDEX "audit_event_action_idx" ON "keel"."audit_event" USING btree ("action","at","id");--> statement-breakpoint
CREATE INDEX "audit_event_target_idx" ON "keel"."audit_event" USING btree ("target_kind","target_id","at","id");--> statement-breakpoint
CREATE INDEX "audit_event_outcome_idx" ON "keel"."audit_event" USING btree ("outcome","at","id");--> statement-breakpoint
CREATE INDEX "audit_event_operation_idx" ON "keel"."audit_event" USING btree ("operation_id");--> statement-breakpoint
CREATE INDEX "bulk_replay_status_idx" ON "keel"."bulk_replay" USING btree ("status","id");--> statement-breakpoint
CREATE INDEX "bulk_replay_item_pending_idx" ON "keel"."bulk_replay_item" USING btree ("job","receipt_id") WHERE "keel"."bulk_replay_item"."result" is null;--> statement-breakpoint
CREATE INDEX "durable_checkpoint_expiry_idx" ON "keel"."durable_checkpoint" USING btree ("lease_expires_at_ms","execution_id");--> statement-breakpoint
CREATE INDEX "metric_sample_metric_idx" ON "keel"."metric_sample" USING btree ("metric","sampled_at");--> statement-breakpoint
CREATE INDEX "metric_sample_at_idx" ON "keel"."metric_sample" USING btree ("sampled_at");--> statement-breakpoint
CREATE UNIQUE INDEX "recovery_proposal_one_pending" ON "keel"."recovery_proposal" USING btree ("target_kind","target_id") WHERE "keel"."recovery_proposal"."status" = 'PENDING';--> statement-breakpoint
CREATE INDEX "recovery_proposal_status_idx" ON "keel"."recovery_proposal" USING btree ("status","created_at","id");--> statement-breakpoint
CREATE INDEX "recovery_proposal_target_idx" ON "keel"."recovery_proposal" USING btree ("target_kind","target_id","created_at");--> statement-breakpoint
CREATE INDEX "settlement_event_receipt_idx" ON "keel"."settlement_event" USING btree ("receipt_id","id");--> statement-breakpoint
CREATE INDEX "settlement_event_at_idx" ON "keel"."settlement_event" USING btree ("at_ms");--> statement-breakpoint
CREATE UNIQUE INDEX "settlement_replay_operation_unique" ON "keel"."settlement_replay" USING btree ("operation_id");--> statement-breakpoint
CREATE INDEX "settlement_replay_receipt_idx" ON "keel"."settlement_replay" USING btree ("receipt_id","at");--> statement-breakpoint
CREATE INDEX "account_user_idx" ON "keel"."account" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "session_user_idx" ON "keel"."session" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "user_role_idx" ON "keel"."user" USING btree ("role");--> statement-breakpoint
CREATE INDEX "verification_identifier_idx" ON "keel"."verification" USING btree ("identifier");