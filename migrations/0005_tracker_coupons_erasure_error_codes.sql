CREATE TABLE "coupon_folders" (
	"id" serial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"name" text NOT NULL,
	"is_default" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "coupon_misses" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"folder_id" integer NOT NULL,
	"message_id" bigint NOT NULL,
	"campaign_id" integer DEFAULT 0 NOT NULL,
	"occurred_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "coupons" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"folder_id" integer NOT NULL,
	"code" text NOT NULL,
	"valid_until" date,
	"message_id" bigint,
	"assigned_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "signals" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"kind" text NOT NULL,
	"email" text NOT NULL,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"consumed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "erased_suppressions" (
	"account_id" integer NOT NULL,
	"address_hash" text NOT NULL,
	"reason" text NOT NULL,
	"erased_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "erased_suppressions_account_id_address_hash_pk" PRIMARY KEY("account_id","address_hash")
);
--> statement-breakpoint
CREATE TABLE "tracker_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"contact_id" integer NOT NULL,
	"category" text DEFAULT '' NOT NULL,
	"action" text DEFAULT '' NOT NULL,
	"label" text DEFAULT '' NOT NULL,
	"property" text DEFAULT '' NOT NULL,
	"value" text DEFAULT 'null' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "transaction_items" (
	"account_id" integer NOT NULL,
	"transaction_id" integer NOT NULL,
	"shop" text DEFAULT '' NOT NULL,
	"position" smallint DEFAULT 0 NOT NULL,
	"code" text DEFAULT '' NOT NULL,
	"title" text DEFAULT '' NOT NULL,
	"category" text DEFAULT '' NOT NULL,
	"price" numeric DEFAULT '0' NOT NULL,
	"amount" numeric DEFAULT '1' NOT NULL,
	"categories" text[] DEFAULT '{}'::text[] NOT NULL,
	CONSTRAINT "transaction_items_pk" PRIMARY KEY("transaction_id","position")
);
--> statement-breakpoint
DROP INDEX "transactions_account_order_uq";--> statement-breakpoint
ALTER TABLE "transactions" ALTER COLUMN "amount" SET DATA TYPE numeric;--> statement-breakpoint
ALTER TABLE "transactions" ALTER COLUMN "amount" SET DEFAULT '0';--> statement-breakpoint
ALTER TABLE "transactions" ALTER COLUMN "tax" SET DATA TYPE numeric;--> statement-breakpoint
ALTER TABLE "transactions" ALTER COLUMN "tax" SET DEFAULT '0';--> statement-breakpoint
ALTER TABLE "transactions" ALTER COLUMN "shipping" SET DATA TYPE numeric;--> statement-breakpoint
ALTER TABLE "transactions" ALTER COLUMN "shipping" SET DEFAULT '0';--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "error_code" text;--> statement-breakpoint
ALTER TABLE "coupon_folders" ADD CONSTRAINT "coupon_folders_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupon_misses" ADD CONSTRAINT "coupon_misses_folder_id_coupon_folders_id_fk" FOREIGN KEY ("folder_id") REFERENCES "public"."coupon_folders"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupons" ADD CONSTRAINT "coupons_folder_id_coupon_folders_id_fk" FOREIGN KEY ("folder_id") REFERENCES "public"."coupon_folders"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signals" ADD CONSTRAINT "signals_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "erased_suppressions" ADD CONSTRAINT "erased_suppressions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tracker_events" ADD CONSTRAINT "tracker_events_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tracker_events" ADD CONSTRAINT "tracker_events_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "transaction_items" ADD CONSTRAINT "transaction_items_transaction_id_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."transactions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "coupon_folders_account_idx" ON "coupon_folders" USING btree ("account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "coupon_folders_default_uq" ON "coupon_folders" USING btree ("account_id") WHERE is_default;--> statement-breakpoint
CREATE UNIQUE INDEX "coupon_misses_message_folder_uq" ON "coupon_misses" USING btree ("message_id","folder_id");--> statement-breakpoint
CREATE INDEX "coupon_misses_folder_idx" ON "coupon_misses" USING btree ("folder_id");--> statement-breakpoint
CREATE UNIQUE INDEX "coupons_folder_code_uq" ON "coupons" USING btree ("folder_id","code");--> statement-breakpoint
CREATE UNIQUE INDEX "coupons_message_folder_uq" ON "coupons" USING btree ("message_id","folder_id") WHERE message_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "coupons_free_idx" ON "coupons" USING btree ("folder_id","created_at","id") WHERE message_id IS NULL;--> statement-breakpoint
CREATE INDEX "signals_pending_idx" ON "signals" USING btree ("id") WHERE "signals"."consumed_at" IS NULL;--> statement-breakpoint
CREATE INDEX "signals_account_idx" ON "signals" USING btree ("account_id","kind","created_at");--> statement-breakpoint
CREATE INDEX "tracker_events_contact_idx" ON "tracker_events" USING btree ("contact_id","category","action");--> statement-breakpoint
CREATE INDEX "transaction_items_product_idx" ON "transaction_items" USING btree ("account_id","shop","code");--> statement-breakpoint
CREATE INDEX "messages_account_kind_sent_idx" ON "messages" USING btree ("account_id","kind","sent_at");--> statement-breakpoint
CREATE UNIQUE INDEX "transactions_account_shop_order_uq" ON "transactions" USING btree ("account_id","shop","order_id");--> statement-breakpoint
CREATE INDEX "transactions_account_time_idx" ON "transactions" USING btree ("account_id","occurred_at");--> statement-breakpoint
ALTER TABLE "transactions" DROP COLUMN "items";