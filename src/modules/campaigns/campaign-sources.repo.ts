import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne } from '../../core/db/sql.js'
import type { ContactForMerge } from '../messages/index.js'
import type { CampaignTargets } from './campaigns.table.js'

export async function campaignLinks(ex: Executor, campaignId: number): Promise<string[] | null> {
  const row = await queryOne<{ links: string[] | null }>(
    ex,
    sql`SELECT links FROM campaigns WHERE id = ${campaignId}`,
  )
  return row?.links ?? null
}

export async function campaignTargets(ex: Executor, campaignId: number): Promise<CampaignTargets | null> {
  const row = await queryOne<{ targets: CampaignTargets }>(
    ex,
    sql`SELECT targets FROM campaigns WHERE id = ${campaignId}`,
  )
  return row?.targets ?? null
}

export async function contactForMerge(ex: Executor, contactId: number): Promise<ContactForMerge | undefined> {
  return queryOne<ContactForMerge>(
    ex,
    sql`SELECT email, name, surname, gender, company, city, street, zip, country, phone, pretitle, surtitle,
               birthday, nameday, custom_fields
        FROM contacts WHERE id = ${contactId}`,
  )
}
