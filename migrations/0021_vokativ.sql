ALTER TABLE "contacts" ADD COLUMN "vokativ" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "contacts" ADD COLUMN "vokativ_s" text DEFAULT '' NOT NULL;--> statement-breakpoint
-- Before these columns an account could keep the vocative only as a custom field, read by *|vokativ|* and by
-- segment conditions on that name: carried over, so those keep working (the custom field stays as it was).
UPDATE "contacts" SET
  "vokativ" = coalesce(CASE jsonb_typeof("custom_fields"->'vokativ') WHEN 'object' THEN "custom_fields"->'vokativ'->>'value' ELSE "custom_fields"->>'vokativ' END, ''),
  "vokativ_s" = coalesce(CASE jsonb_typeof("custom_fields"->'vokativ_s') WHEN 'object' THEN "custom_fields"->'vokativ_s'->>'value' ELSE "custom_fields"->>'vokativ_s' END, '')
WHERE "custom_fields" ?| ARRAY['vokativ', 'vokativ_s'];
