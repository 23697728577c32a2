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
ALTER TABLE "signals" ADD CONSTRAINT "signals_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tracker_events" ADD CONSTRAINT "tracker_events_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tracker_events" ADD CONSTRAINT "tracker_events_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "transaction_items" ADD CONSTRAINT "transaction_items_transaction_id_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."transactions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "signals_pending_idx" ON "signals" USING btree ("id") WHERE "signals"."consumed_at" IS NULL;--> statement-breakpoint
CREATE INDEX "signals_account_idx" ON "signals" USING btree ("account_id","kind","created_at");--> statement-breakpoint
CREATE INDEX "tracker_events_contact_idx" ON "tracker_events" USING btree ("contact_id","category","action");--> statement-breakpoint
CREATE INDEX "transaction_items_product_idx" ON "transaction_items" USING btree ("account_id","shop","code");--> statement-breakpoint
CREATE UNIQUE INDEX "transactions_account_shop_order_uq" ON "transactions" USING btree ("account_id","shop","order_id");--> statement-breakpoint
CREATE INDEX "transactions_account_time_idx" ON "transactions" USING btree ("account_id","occurred_at");--> statement-breakpoint
ALTER TABLE "transactions" DROP COLUMN "items";