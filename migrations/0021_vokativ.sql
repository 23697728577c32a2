ALTER TABLE "contacts" ADD COLUMN "vokativ" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "contacts" ADD COLUMN "vokativ_s" text DEFAULT '' NOT NULL;