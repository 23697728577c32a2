CREATE TABLE "automation_date_scans" (
	"pipeline_id" integer PRIMARY KEY NOT NULL,
	"scanned_on" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "automation_date_scans" ADD CONSTRAINT "automation_date_scans_pipeline_id_pipelines_id_fk" FOREIGN KEY ("pipeline_id") REFERENCES "public"."pipelines"("id") ON DELETE cascade ON UPDATE no action;