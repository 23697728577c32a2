CREATE TABLE "recommender_bestsellers" (
	"recommender_id" integer NOT NULL,
	"product_id" text NOT NULL,
	"score" integer NOT NULL,
	"rank" integer NOT NULL,
	CONSTRAINT "recommender_bestsellers_recommender_id_product_id_pk" PRIMARY KEY("recommender_id","product_id")
);
--> statement-breakpoint
CREATE TABLE "recommender_pairs" (
	"recommender_id" integer NOT NULL,
	"product_id" text NOT NULL,
	"other_id" text NOT NULL,
	"score" integer NOT NULL,
	CONSTRAINT "recommender_pairs_recommender_id_product_id_other_id_pk" PRIMARY KEY("recommender_id","product_id","other_id")
);
--> statement-breakpoint
CREATE TABLE "recommenders" (
	"id" serial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"shop_id" text NOT NULL,
	"feed_id" integer NOT NULL,
	"status" text DEFAULT 'created' NOT NULL,
	"error" text,
	"settings" jsonb DEFAULT '{"filtered_products":[],"filtered_categories":[],"included_months":[]}'::jsonb NOT NULL,
	"last_trained_at" timestamp with time zone,
	"attempted_at" timestamp with time zone,
	"trained_version" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "recommender_bestsellers" ADD CONSTRAINT "recommender_bestsellers_recommender_id_recommenders_id_fk" FOREIGN KEY ("recommender_id") REFERENCES "public"."recommenders"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recommender_pairs" ADD CONSTRAINT "recommender_pairs_recommender_id_recommenders_id_fk" FOREIGN KEY ("recommender_id") REFERENCES "public"."recommenders"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recommenders" ADD CONSTRAINT "recommenders_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recommenders" ADD CONSTRAINT "recommenders_feed_id_feeds_id_fk" FOREIGN KEY ("feed_id") REFERENCES "public"."feeds"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "recommender_bestsellers_rank_idx" ON "recommender_bestsellers" USING btree ("recommender_id","rank");--> statement-breakpoint
CREATE UNIQUE INDEX "recommenders_account_shop_feed_uq" ON "recommenders" USING btree ("account_id","shop_id","feed_id");