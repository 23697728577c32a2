ALTER TABLE "message_batches" ADD COLUMN "kind" text DEFAULT 'transactional' NOT NULL;--> statement-breakpoint
ALTER TABLE "message_batches" ADD COLUMN "marketing" boolean DEFAULT false NOT NULL;