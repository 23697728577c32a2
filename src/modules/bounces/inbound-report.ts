/** What one inbound message to the bounce listener says about a message we sent. */
export interface InboundReport {
  kind: 'hard_bounce' | 'soft_bounce' | 'complaint' | 'delayed' | 'auto_reply' | 'unknown'
  /** The address that failed or complained, as the report names it. */
  recipient?: string
  /** RFC 3463 enhanced status code, e.g. "5.1.1". */
  status?: string
  /** The remote server's reason on one line, at most DIAGNOSTIC_MAX characters. */
  diagnostic?: string
  /** Message-ID of the message we sent, angle brackets included ("<id@host>"). */
  originalMessageId?: string
  /** The envelope sender of the message we sent: our VERP address when the report carries it. */
  originalEnvelopeFrom?: string
  /** ARF Feedback-Type, lower-cased ("abuse", "fraud", ...). */
  feedbackType?: string
}

export const DIAGNOSTIC_MAX = 500

/**
 * One line, no repeated multi-line reply prefixes, bounded. Gmail's diagnostic is a multi-line reply
 * ("550-5.1.1 The email account ... 550-5.1.1 double-checking ... 550 5.1.1 https://..."); the prefixes
 * after the first carry nothing and would eat the length budget.
 */
export function cleanDiagnostic(value: string | undefined): string | undefined {
  if (!value) return undefined
  let text = value.replace(/\s+/g, ' ').trim()
  const lead = /^(\d{3})[ -](?:(\d\.\d{1,3}\.\d{1,3}) )?/.exec(text)
  if (lead?.[1]) {
    const code = lead[1]
    const repeated = lead[2]
      ? new RegExp(`\\s${code}[ -]${lead[2].replace(/\./g, '\\.')}(?=\\s|$)`, 'g')
      : new RegExp(`\\s${code}-`, 'g')
    text = `${code} ${text.slice(code.length + 1).replace(repeated, '')}`.replace(/\s+/g, ' ').trim()
  }
  if (!text) return undefined
  return text.length > DIAGNOSTIC_MAX ? `${text.slice(0, DIAGNOSTIC_MAX - 1).trimEnd()}…` : text
}

/**
 * Control characters, NUL above all: PostgreSQL takes no NUL in text or jsonb, so one in a remote server's
 * diagnostic failed every write of the report, and its sender retried it for days.
 */
const CONTROLS = /\s*[\u0000-\u001f\u007f]+\s*/g

/**
 * Drops absent fields so a report compares and serialises as exactly what was found, and control characters
 * from the rest (each field is one line of text).
 */
export function compactReport(report: InboundReport): InboundReport {
  const out: InboundReport = { kind: report.kind }
  for (const key of Object.keys(report) as (keyof InboundReport)[]) {
    const value = report[key]?.replace(CONTROLS, ' ').trim()
    if (value) Object.assign(out, { [key]: value })
  }
  return out
}
