CREATE TABLE "account_webhooks" (
	"account_id" integer PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"secret" text NOT NULL,
	"disabled_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_batches" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"body" text NOT NULL,
	"events" integer NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"last_error" text
);
--> statement-breakpoint
CREATE TABLE "webhook_outbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"payload" jsonb NOT NULL
);
--> statement-breakpoint
CREATE INDEX "webhook_batches_due_idx" ON "webhook_batches" USING btree ("next_attempt_at");--> statement-breakpoint
CREATE INDEX "webhook_batches_account_idx" ON "webhook_batches" USING btree ("account_id");