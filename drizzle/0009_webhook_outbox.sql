CREATE TABLE "keel"."webhook_delivery" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "keel"."webhook_delivery_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"event_id" bigint NOT NULL,
	"endpoint" text NOT NULL,
	"status" text DEFAULT 'PENDING' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
	"lease_until" timestamp with time zone,
	"last_http_status" integer,
	"last_error" text,
	"delivered_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
	CONSTRAINT "webhook_delivery_status" CHECK ("keel"."webhook_delivery"."status" in ('PENDING', 'DELIVERED', 'FAILED')),
	CONSTRAINT "webhook_delivery_delivered_shape" CHECK (("keel"."webhook_delivery"."status" = 'DELIVERED') = ("keel"."webhook_delivery"."delivered_at" is not null)),
	CONSTRAINT "webhook_delivery_error_length" CHECK ("keel"."webhook_delivery"."last_error" is null or length("keel"."webhook_delivery"."last_error") <= 200)
);
--> statement-breakpoint
CREATE TABLE "keel"."webhook_endpoint" (
	"name" text PRIMARY KEY NOT NULL,
	"origin" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_endpoint_name" CHECK ("keel"."webhook_endpoint"."name" ~ '^[a-z0-9_-]{1,32}$')
);
--> statement-breakpoint
CREATE TABLE "keel"."webhook_event" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "keel"."webhook_event_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"kind" text NOT NULL,
	"subject" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "keel"."webhook_delivery" ADD CONSTRAINT "webhook_delivery_event_id_webhook_event_id_fk" FOREIGN KEY ("event_id") REFERENCES "keel"."webhook_event"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_delivery_event_endpoint" ON "keel"."webhook_delivery" USING btree ("event_id","endpoint");--> statement-breakpoint
CREATE INDEX "webhook_delivery_due_idx" ON "keel"."webhook_delivery" USING btree ("next_attempt_at","id") WHERE "keel"."webhook_delivery"."status" = 'PENDING';--> statement-breakpoint
CREATE INDEX "webhook_delivery_status_idx" ON "keel"."webhook_delivery" USING btree ("status","id");--> statement-breakpoint
CREATE INDEX "webhook_event_kind_subject_idx" ON "keel"."webhook_event" USING btree ("kind","subject","created_at");