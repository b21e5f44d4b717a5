ALTER TABLE "keel"."user" ADD COLUMN "time_zone" text DEFAULT 'utc' NOT NULL;--> statement-breakpoint
ALTER TABLE "keel"."user" ADD CONSTRAINT "user_time_zone_shape" CHECK ("keel"."user"."time_zone" in ('utc', 'browser')
        or (char_length("keel"."user"."time_zone") <= 64 and "keel"."user"."time_zone" ~ '^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){0,2}$'));