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
ALTER TABLE "coupon_folders" ADD CONSTRAINT "coupon_folders_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupon_misses" ADD CONSTRAINT "coupon_misses_folder_id_coupon_folders_id_fk" FOREIGN KEY ("folder_id") REFERENCES "public"."coupon_folders"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupons" ADD CONSTRAINT "coupons_folder_id_coupon_folders_id_fk" FOREIGN KEY ("folder_id") REFERENCES "public"."coupon_folders"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "coupon_folders_account_idx" ON "coupon_folders" USING btree ("account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "coupon_folders_default_uq" ON "coupon_folders" USING btree ("account_id") WHERE is_default;--> statement-breakpoint
CREATE UNIQUE INDEX "coupon_misses_message_folder_uq" ON "coupon_misses" USING btree ("message_id","folder_id");--> statement-breakpoint
CREATE INDEX "coupon_misses_folder_idx" ON "coupon_misses" USING btree ("folder_id");--> statement-breakpoint
CREATE UNIQUE INDEX "coupons_folder_code_uq" ON "coupons" USING btree ("folder_id","code");--> statement-breakpoint
CREATE UNIQUE INDEX "coupons_message_folder_uq" ON "coupons" USING btree ("message_id","folder_id") WHERE message_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "coupons_free_idx" ON "coupons" USING btree ("folder_id","created_at","id") WHERE message_id IS NULL;