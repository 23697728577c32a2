-- Consumed signals go before the column that marked them: left, they would read as pending and start their
-- automations a second time.
DELETE FROM "signals" WHERE "consumed_at" IS NOT NULL;--> statement-breakpoint
DROP INDEX "signals_pending_idx";--> statement-breakpoint
ALTER TABLE "signals" DROP COLUMN "consumed_at";