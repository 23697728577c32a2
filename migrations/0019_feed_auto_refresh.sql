ALTER TABLE "feeds" ADD COLUMN "auto_refresh_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "feeds" ADD COLUMN "refresh_started_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "feeds_auto_refresh_idx" ON "feeds" USING btree ("auto_refresh_at") WHERE auto_refresh_at IS NOT NULL;--> statement-breakpoint
-- Feeds of before: due a day (the default FEED_AUTO_REFRESH_HOURS) after their last download or request, at once when never downloaded.
UPDATE "feeds" SET "auto_refresh_at" = coalesce(greatest("refreshed_at", "refresh_requested_at") + interval '24 hours', now());
