CREATE TABLE "domains" (
	"id" serial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"valid" boolean DEFAULT false NOT NULL,
	"blocked" boolean DEFAULT false NOT NULL,
	"dkim_selector" text NOT NULL,
	"dkim_private_key" text NOT NULL,
	"dkim_public_key" text NOT NULL,
	"checks" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"checked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"message_id" bigint,
	"campaign_id" integer DEFAULT 0 NOT NULL,
	"pipeline_id" integer,
	"action_id" text,
	"contact_id" integer,
	"email" text NOT NULL,
	"event" text NOT NULL,
	"msg" text,
	"url" text,
	"occurred_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "messages" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"kind" text NOT NULL,
	"batch_id" integer,
	"campaign_id" integer DEFAULT 0 NOT NULL,
	"pipeline_id" integer,
	"action_id" text,
	"contact_id" integer,
	"email" text NOT NULL,
	"recipient_name" text DEFAULT '' NOT NULL,
	"vars" jsonb,
	"subject" text DEFAULT '' NOT NULL,
	"status" smallint DEFAULT 0 NOT NULL,
	"smtp_message_id" text,
	"track_opens" boolean DEFAULT true NOT NULL,
	"track_clicks" boolean DEFAULT true NOT NULL,
	"links" jsonb,
	"html" text,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone,
	"first_open_at" timestamp with time zone,
	"first_click_at" timestamp with time zone,
	"bounced_at" timestamp with time zone,
	"complained_at" timestamp with time zone,
	"unsubscribed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "templates" (
	"id" serial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"name" text NOT NULL,
	"html" text NOT NULL,
	"subject" text DEFAULT '' NOT NULL,
	"folder" integer DEFAULT 0 NOT NULL,
	"campaign_id" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "message_batches" (
	"id" serial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"template_id" integer,
	"from_name" text NOT NULL,
	"from_email" text NOT NULL,
	"reply_to" text,
	"subject" text NOT NULL,
	"html" text,
	"text" text,
	"global_vars" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"copies" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"attachments" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"track_opens" boolean DEFAULT true NOT NULL,
	"track_clicks" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "domains" ADD CONSTRAINT "domains_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "templates" ADD CONSTRAINT "templates_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "domains_account_name_type_uq" ON "domains" USING btree ("account_id","name","type");--> statement-breakpoint
CREATE INDEX "domains_name_idx" ON "domains" USING btree ("name");--> statement-breakpoint
CREATE INDEX "events_account_email_idx" ON "events" USING btree ("account_id","email","occurred_at");--> statement-breakpoint
CREATE INDEX "events_message_idx" ON "events" USING btree ("message_id");--> statement-breakpoint
CREATE INDEX "events_campaign_idx" ON "events" USING btree ("campaign_id","event","occurred_at");--> statement-breakpoint
CREATE INDEX "messages_campaign_status_idx" ON "messages" USING btree ("campaign_id","status","id");--> statement-breakpoint
CREATE INDEX "messages_account_email_idx" ON "messages" USING btree ("account_id","email");--> statement-breakpoint
CREATE INDEX "messages_batch_idx" ON "messages" USING btree ("batch_id");--> statement-breakpoint
CREATE INDEX "templates_account_idx" ON "templates" USING btree ("account_id","id");--> statement-breakpoint
CREATE INDEX "message_batches_account_idx" ON "message_batches" USING btree ("account_id","id");--> statement-breakpoint
CREATE INDEX "contacts_search_phone_idx" ON "contacts" USING btree ("account_id",lower("phone") text_pattern_ops);--> statement-breakpoint
CREATE INDEX "contacts_phone_digits_idx" ON "contacts" USING btree ("account_id",replace("phone", ' ', ''));