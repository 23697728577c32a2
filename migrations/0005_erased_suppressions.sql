CREATE TABLE "erased_suppressions" (
	"account_id" integer NOT NULL,
	"address_hash" text NOT NULL,
	"reason" text NOT NULL,
	"erased_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "erased_suppressions_account_id_address_hash_pk" PRIMARY KEY("account_id","address_hash")
);
--> statement-breakpoint
ALTER TABLE "erased_suppressions" ADD CONSTRAINT "erased_suppressions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;