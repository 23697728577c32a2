-- Campaigns errored before error codes were stored: the code their old reason text stands for (contract §4),
-- the old text kept as the message; a reason not recognised becomes `internal`.
UPDATE "campaigns" SET "error_code" = CASE
    WHEN "error" = 'cancelled' THEN 'cancelled'
    WHEN "error" LIKE 'no sender:%' THEN 'no_from_email'
    WHEN "error" LIKE 'no verified sending domain%' OR "error" LIKE 'the sending domain is no longer verified%'
      THEN 'no_sending_domain'
    WHEN "error" LIKE 'the relay refused every message%' THEN 'relay_refused_all'
    ELSE 'internal'
  END
WHERE "status" = 4 AND "error_code" IS NULL;
--> statement-breakpoint
UPDATE "campaigns" SET "error" = 'The campaign was cancelled: its unsent messages will not go out.'
WHERE "status" = 4 AND "error" = 'cancelled';
