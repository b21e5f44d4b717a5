-- Each webhook endpoint's payload format (KEEL_WEBHOOK_FORMAT_<NAME>), for the admin page;
-- the keys a format needs (PagerDuty's routing key, Opsgenie's API key) stay in the environment.
ALTER TABLE "keel"."webhook_endpoint" ADD COLUMN "format" text DEFAULT 'generic' NOT NULL;--> statement-breakpoint
ALTER TABLE "keel"."webhook_endpoint" ADD CONSTRAINT "webhook_endpoint_format" CHECK ("keel"."webhook_endpoint"."format" in ('generic', 'slack', 'pagerduty', 'opsgenie'));
