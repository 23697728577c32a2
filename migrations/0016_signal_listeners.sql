CREATE TABLE "signal_listeners" (
	"pipeline_id" integer PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"kind" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "signal_listeners" ADD CONSTRAINT "signal_listeners_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "signal_listeners_account_kind_idx" ON "signal_listeners" USING btree ("account_id","kind");--> statement-breakpoint
-- The pipelines active now listen from the start: written by hand, as the pipelines module keeps it from here on.
INSERT INTO "signal_listeners" ("pipeline_id", "account_id", "kind")
SELECT "id", "account_id", "trigger"->>'type' FROM "pipelines"
WHERE "status" = 'active' AND "deleted_at" IS NULL AND "trigger"->>'type' IN ('purchase', 'event', 'subscribe', 'tag');
