CREATE TABLE "feed_products_staging" (
	"feed_id" integer NOT NULL,
	"product_id" text NOT NULL,
	"account_id" integer NOT NULL,
	"title" text DEFAULT '' NOT NULL,
	"url" text DEFAULT '' NOT NULL,
	"image" text DEFAULT '' NOT NULL,
	"price" numeric,
	"categories" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"extra" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "feed_products_staging_feed_id_product_id_pk" PRIMARY KEY("feed_id","product_id")
);
--> statement-breakpoint
ALTER TABLE "feeds" ADD COLUMN "format_detected" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "feed_products_staging" ADD CONSTRAINT "feed_products_staging_feed_id_feeds_id_fk" FOREIGN KEY ("feed_id") REFERENCES "public"."feeds"("id") ON DELETE cascade ON UPDATE no action;