CREATE TABLE "settle"."receipt_place" (
	"receipt_id" text PRIMARY KEY NOT NULL,
	"place" text NOT NULL,
	CONSTRAINT "receipt_place_place" CHECK ("settle"."receipt_place"."place" in ('queued', 'dead_lettered'))
);
