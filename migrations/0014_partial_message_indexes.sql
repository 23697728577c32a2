DROP INDEX "messages_batch_idx";--> statement-breakpoint
DROP INDEX "messages_account_kind_sent_idx";--> statement-breakpoint
CREATE INDEX "messages_batch_idx" ON "messages" USING btree ("batch_id") WHERE "messages"."batch_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "messages_account_kind_sent_idx" ON "messages" USING btree ("account_id","kind","sent_at") WHERE "messages"."kind" IN ('transactional', 'confirmation');