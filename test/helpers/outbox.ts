import fs from 'node:fs/promises'
import path from 'node:path'
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser'

export interface OutboxMail {
  file: string
  raw: string
  parsed: ParsedMail
}

/** Every .eml written to an outbox folder so far (none when the folder does not exist yet). */
export async function outboxMails(dir: string): Promise<OutboxMail[]> {
  const files = (await fs.readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.eml')).sort()
  return Promise.all(
    files.map(async (file) => {
      const raw = await fs.readFile(path.join(dir, file), 'utf8')
      return { file, raw, parsed: await simpleParser(raw) }
    }),
  )
}

export const toAddresses = (a: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(a) ? a : a ? [a] : []).flatMap((x) => x.value.map((v) => v.address ?? ''))

/** Polls (bounded) until an .eml addressed to `address` is in the outbox folder. */
export async function waitForOutboxMail(
  dir: string,
  address: string,
  timeoutMs = 15_000,
): Promise<OutboxMail> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = (await outboxMails(dir)).find((m) => toAddresses(m.parsed.to).includes(address))
    if (found) return found
    if (Date.now() > deadline) throw new Error(`no .eml to ${address} in ${dir}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
