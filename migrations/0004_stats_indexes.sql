-- Conversions join the campaign's clicked messages to transactions by address: an index over only the
-- clicked rows, carrying the first click, answers it without reading the table.
CREATE INDEX IF NOT EXISTS "messages_campaign_clicked_idx" ON "messages" USING btree ("campaign_id", "email") INCLUDE ("first_click_at") WHERE "first_click_at" IS NOT NULL;--> statement-breakpoint
-- The in-range statistics count distinct messages with an event in a period: carrying message_id lets the
-- index answer alone (drizzle's index builder has no INCLUDE, hence this hand-written migration).
DROP INDEX IF EXISTS "events_campaign_idx";--> statement-breakpoint
CREATE INDEX "events_campaign_idx" ON "events" USING btree ("campaign_id", "event", "occurred_at") INCLUDE ("message_id");
