CREATE TABLE "automation_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"pipeline_id" integer NOT NULL,
	"run_id" bigint NOT NULL,
	"action_id" text NOT NULL,
	"email" text NOT NULL,
	"props" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"next" jsonb,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "automation_runs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"pipeline_id" integer NOT NULL,
	"pipeline_version" integer NOT NULL,
	"contact_id" integer,
	"email" text NOT NULL,
	"trigger_kind" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"node_id" text,
	"due_at" timestamp with time zone,
	"claimed_until" timestamp with time zone,
	"state" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone,
	"end_reason" text
);
--> statement-breakpoint
CREATE TABLE "feed_products" (
	"feed_id" integer NOT NULL,
	"product_id" text NOT NULL,
	"account_id" integer NOT NULL,
	"title" text DEFAULT '' NOT NULL,
	"url" text DEFAULT '' NOT NULL,
	"image" text DEFAULT '' NOT NULL,
	"price" numeric,
	"categories" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"extra" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "feed_products_feed_id_product_id_pk" PRIMARY KEY("feed_id","product_id")
);
--> statement-breakpoint
CREATE TABLE "feeds" (
	"id" serial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"name" text NOT NULL,
	"url" text NOT NULL,
	"kind" text DEFAULT 'product' NOT NULL,
	"format" text,
	"state" text DEFAULT 'never' NOT NULL,
	"error" text,
	"item_count" integer DEFAULT 0 NOT NULL,
	"refresh_requested_at" timestamp with time zone,
	"refreshed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pipelines" (
	"id" serial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"name" text NOT NULL,
	"list_id" integer NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"trigger" jsonb NOT NULL,
	"reentry" text DEFAULT 'once' NOT NULL,
	"start" text NOT NULL,
	"actions" jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "automation_log" ADD CONSTRAINT "automation_log_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "automation_runs" ADD CONSTRAINT "automation_runs_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feed_products" ADD CONSTRAINT "feed_products_feed_id_feeds_id_fk" FOREIGN KEY ("feed_id") REFERENCES "public"."feeds"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feeds" ADD CONSTRAINT "feeds_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipelines" ADD CONSTRAINT "pipelines_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "automation_log_contact_idx" ON "automation_log" USING btree ("account_id","email","id");--> statement-breakpoint
CREATE INDEX "automation_log_pipeline_idx" ON "automation_log" USING btree ("pipeline_id","created_at");--> statement-breakpoint
CREATE INDEX "automation_log_run_idx" ON "automation_log" USING btree ("run_id","id");--> statement-breakpoint
CREATE INDEX "automation_runs_due_idx" ON "automation_runs" USING btree ("due_at","id") WHERE "automation_runs"."status" = 'active';--> statement-breakpoint
CREATE INDEX "automation_runs_pipeline_idx" ON "automation_runs" USING btree ("pipeline_id","contact_id");--> statement-breakpoint
CREATE INDEX "automation_runs_contact_idx" ON "automation_runs" USING btree ("account_id","email");--> statement-breakpoint
CREATE INDEX "feeds_account_idx" ON "feeds" USING btree ("account_id","id");--> statement-breakpoint
CREATE INDEX "pipelines_account_idx" ON "pipelines" USING btree ("account_id","id");