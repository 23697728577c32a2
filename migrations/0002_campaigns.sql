CREATE TABLE "campaigns" (
	"id" serial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"title" text NOT NULL,
	"subject" text NOT NULL,
	"from_name" text NOT NULL,
	"from_email" text NOT NULL,
	"reply_to" text NOT NULL,
	"html_text" text NOT NULL,
	"plain_text" text,
	"template_id" integer,
	"targets" jsonb NOT NULL,
	"status" smallint DEFAULT 0 NOT NULL,
	"paused_at" timestamp with time zone,
	"scheduled_at" timestamp with time zone,
	"sent_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"recipients" integer DEFAULT 0 NOT NULL,
	"error" text,
	"links" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"changed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stat_counters" (
	"campaign_id" integer NOT NULL,
	"pipeline_id" integer DEFAULT 0 NOT NULL,
	"action_id" text DEFAULT '' NOT NULL,
	"shard" smallint NOT NULL,
	"inject" bigint DEFAULT 0 NOT NULL,
	"bounce" bigint DEFAULT 0 NOT NULL,
	"hard_bounce" bigint DEFAULT 0 NOT NULL,
	"soft_bounce" bigint DEFAULT 0 NOT NULL,
	"open" bigint DEFAULT 0 NOT NULL,
	"total_open" bigint DEFAULT 0 NOT NULL,
	"click" bigint DEFAULT 0 NOT NULL,
	"total_click" bigint DEFAULT 0 NOT NULL,
	"spam" bigint DEFAULT 0 NOT NULL,
	"unsub" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "stat_counters_campaign_id_pipeline_id_action_id_shard_pk" PRIMARY KEY("campaign_id","pipeline_id","action_id","shard")
);
--> statement-breakpoint
CREATE TABLE "segments" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"list_id" integer NOT NULL,
	"name" text NOT NULL,
	"filter" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "transactions" (
	"id" serial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"order_id" text NOT NULL,
	"email" text NOT NULL,
	"shop" text DEFAULT '' NOT NULL,
	"amount" double precision DEFAULT 0 NOT NULL,
	"tax" double precision DEFAULT 0 NOT NULL,
	"shipping" double precision DEFAULT 0 NOT NULL,
	"city" text DEFAULT '' NOT NULL,
	"county" text,
	"country" text DEFAULT '' NOT NULL,
	"status" text DEFAULT '' NOT NULL,
	"props" jsonb,
	"items" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"occurred_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "claimed_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "soft_bounced_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "segments" ADD CONSTRAINT "segments_list_id_lists_id_fk" FOREIGN KEY ("list_id") REFERENCES "public"."lists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "transactions" ADD CONSTRAINT "transactions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "campaigns_account_idx" ON "campaigns" USING btree ("account_id","id");--> statement-breakpoint
CREATE INDEX "campaigns_scheduled_idx" ON "campaigns" USING btree ("status","scheduled_at");--> statement-breakpoint
CREATE INDEX "segments_list_idx" ON "segments" USING btree ("account_id","list_id");--> statement-breakpoint
CREATE UNIQUE INDEX "transactions_account_order_uq" ON "transactions" USING btree ("account_id","order_id");--> statement-breakpoint
CREATE INDEX "transactions_account_email_idx" ON "transactions" USING btree ("account_id","email","occurred_at");--> statement-breakpoint
CREATE INDEX "events_account_time_idx" ON "events" USING btree ("account_id","occurred_at");