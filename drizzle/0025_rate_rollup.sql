CREATE TABLE "keel"."rate_hour" (
	"metric" text NOT NULL,
	"dimension" text DEFAULT '' NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "rate_hour_metric_hour_dimension_pk" PRIMARY KEY("metric","hour","dimension"),
	CONSTRAINT "rate_hour_metric" CHECK ("keel"."rate_hour"."metric" in ('settlements_finished', 'settlements_retried', 'settlements_dead_lettered', 'executions_started', 'executions_failed')),
	CONSTRAINT "rate_hour_count" CHECK ("keel"."rate_hour"."count" > 0)
);
--> statement-breakpoint
CREATE TABLE "keel"."rate_minute" (
	"metric" text NOT NULL,
	"dimension" text DEFAULT '' NOT NULL,
	"minute" timestamp with time zone NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "rate_minute_metric_minute_dimension_pk" PRIMARY KEY("metric","minute","dimension"),
	CONSTRAINT "rate_minute_metric" CHECK ("keel"."rate_minute"."metric" in ('settlements_finished', 'settlements_retried', 'settlements_dead_lettered', 'executions_started', 'executions_failed')),
	CONSTRAINT "rate_minute_count" CHECK ("keel"."rate_minute"."count" > 0)
);
--> statement-breakpoint
CREATE INDEX "rate_hour_hour_idx" ON "keel"."rate_hour" USING btree ("hour");--> statement-breakpoint
CREATE INDEX "rate_minute_minute_idx" ON "keel"."rate_minute" USING btree ("minute");--> statement-breakpoint
CREATE INDEX "settlement_event_at_brin_idx" ON "keel"."settlement_event" USING brin ("at_ms") WITH (autosummarize=true);