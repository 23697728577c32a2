import fs from 'node:fs'
import { api, machineBusyMs, processCpuMs, round } from './lib/measure.js'
import { sampleCpuGroups } from './lib/process-cpu.js'
import type { ServerProcess } from './lib/server-process.js'
import type { PostfixSink } from './lib/smtp-sink.js'
import { prepareRecommender } from './campaign-recommend.setup.js'
import { transactionalCalls, transactionalWaits, type TransactionalWaits } from './lib/transactional-calls.js'

export interface CampaignSendFigures {
  recipients: number
  /** From the send call to the last message at the sink (preparing included). */
  totalSeconds: number
  msgPerSec: number
  /** From the first message at the sink to the last: the sending rate alone. */
  sendingMsgPerSec: number
  /** The server's RSS when the send was called (after the import), and its peak while sending. */
  rssAtSendMb: number
  peakRssMb: number
  /**
   * CPU per message from the send call to the last message: the server process (threads included), and the
   * whole machine (PostgreSQL, smtp-sink and this bench too). Steadier from run to run than msg/s on a
   * shared machine, so changes are compared by these.
   */
  serverCpuMsPerMsg: number
  machineCpuMsPerMsg: number
  /**
   * The machine's share by process, CPU per message: the server, the bench database's PostgreSQL backends,
   * PostgreSQL's shared processes (WAL writer, checkpointer…: other databases' work too), smtp-sink, this bench.
   * Unlike the machine's figure, other work on a shared machine does not count in it.
   */
  cpuMsPerMsgByProcess: Record<string, number>
  /** With coupons: codes the folder shows handed out after the send (a count in the database). */
  couponsAssigned?: number
  /** With transactional calls beside the campaign: how long their mail waited for the relay. */
  transactional?: TransactionalBeside
}

/** Transactional mail sent while the campaign sends (issue 11: each origin its fair share). */
export interface TransactionalBeside extends TransactionalWaits {
  /** Calls made (one recipient each) and those answered 200. */
  calls: number
  accepted: number
}

export interface CampaignSendOptions {
  /** Issue 12: the mail carries `*|COUPON:<folder>|*`, with one code per recipient imported beforehand. */
  coupons?: boolean
  /** Issue 14: the mail carries `*|RECOMMEND:<id>:3|*`; every recipient bought once, so each gets co-purchases. */
  recommend?: boolean
  /**
   * Issue 11: a shop's order confirmations (`POST /transactional/send-message`, one recipient each) at this many
   * calls a second for as long as the campaign sends. PostgreSQL only: the wait is read from the ledger.
   */
  transactionalPerSec?: number
}

/** Codes per import call: the API's maximum. */
const IMPORT_CHUNK = 10_000

const DOMAIN = 'campaign.bench.example'

// About 6 KB of HTML with a style block, five links and merge tags, like a real newsletter.
const HTML =
  '<html><head><style>p{font-family:Arial;color:#333} a{color:#0a6}</style></head><body>' +
  '<h1>Hello *|name|* *|surname|*</h1>' +
  Array.from(
    { length: 5 },
    (_, i) =>
      `<p>${'Spring collection, new arrivals and offers picked for you. '.repeat(15)}` +
      `<a href="https://shop.example/p/${i}?utm_source=news">Product ${i}</a></p>`,
  ).join('') +
  '<p>*|IF:city|*Shops in *|city|*.*|ELSE:|*Find a shop near you.*|END:IF|*</p>' +
  '<p><a href="*|UNSUB|*">Unsubscribe</a></p></body></html>'

const readerEmail = (i: number) => `reader${i}@bench-readers.example`

function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) / 1024 : 0
  } catch {
    return 0
  }
}

/**
 * Issue 4 figure: a campaign to `recipients` subscribers, personalised, tracked and DKIM-signed, sent to
 * smtp-sink on loopback; messages/s and the server process's peak RSS (its signing threads included).
 */
export async function benchCampaignSend(
  server: ServerProcess,
  sink: PostfixSink,
  publish: (records: { type: string; host: string; value: string }[]) => void,
  recipients: number,
  opts: CampaignSendOptions = {},
): Promise<CampaignSendFigures> {
  const { url, key } = server
  const domain = (await api(url, key, 'POST', '/domains', { name: DOMAIN, type: 'sending' })).json as {
    dns: { type: string; host: string; value: string }[]
  }
  publish(domain.dns)
  const verified = (await api(url, key, 'POST', `/domains/${DOMAIN}/verify?type=sending`)).json as {
    valid: boolean
  }
  if (!verified.valid) throw new Error('bench domain did not verify against the local DNS server')
  const list = (await api(url, key, 'POST', '/lists', { name: 'Campaign bench' })).json as { id: number }
  for (let i = 0; i < recipients; i += 3000) {
    const batch = Array.from({ length: Math.min(3000, recipients - i) }, (_, j) => ({
      email: readerEmail(i + j),
      name: `Reader${i + j}`,
      surname: 'Bench',
      city: (i + j) % 2 ? 'Praha' : '',
    }))
    const r = await api(url, key, 'POST', `/lists/${list.id}/subscribe-bulk`, { subscriber_data: batch })
    if (r.status !== 200) throw new Error(`import failed: ${r.status}`)
  }
  let html = HTML
  let folderId = 0
  if (opts.coupons) {
    folderId = ((await api(url, key, 'POST', '/coupons/folders', { name: 'Bench' })).json as { id: number })
      .id
    for (let i = 0; i < recipients; i += IMPORT_CHUNK) {
      const codes = Array.from({ length: Math.min(IMPORT_CHUNK, recipients - i) }, (_, j) => `BENCH-${i + j}`)
      await api(url, key, 'POST', '/coupons/import', { folderId, codes, valid_until: '2099-12-31' })
    }
    html = HTML.replace('</h1>', `</h1><p>Your code: <b>*|COUPON:${folderId}|*</b></p>`)
  }
  if (opts.recommend) {
    const recommender = await prepareRecommender(server, recipients, readerEmail)
    html = html.replace(
      '<p><a href="*|UNSUB|*">',
      `<p>You may also like</p>*|RECOMMEND:${recommender}:3|*<p><a href="*|UNSUB|*">`,
    )
  }
  const created = (
    await api(url, key, 'POST', '/campaigns', {
      title: 'Bench',
      from_name: 'Bench Shop',
      from_email: `news@${DOMAIN}`,
      reply_to: `help@${DOMAIN}`,
      subject: 'New for you, *|name|*',
      html_text: html,
      recepient_lists: [list.id],
    })
  ).json as { id: number }

  const before = sink.count()
  const rssAtSend = rssMb(server.pid)
  let peak = rssAtSend
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server.pid))), 100)
  const started = Date.now()
  const serverCpu0 = processCpuMs(server.pid)
  const machine0 = machineBusyMs()
  const bench0 = process.cpuUsage()
  // Sampled every half second, and the sink polled every 100 ms: at 20 ms and 100 ms this bench took 0.022 ms
  // of CPU a message (2.7 % of the machine's), taken from the send it measures; the end of a send is now known
  // to within 100 ms (a fifth of a percent of a 100,000 send), and every PostgreSQL backend of the pool is
  // running before the send starts, so none is missed.
  const groups = sampleCpuGroups((pid, cmd) => {
    if (pid === server.pid) return 'server'
    if (pid === sink.pid) return 'smtpSink'
    if (!cmd.startsWith('postgres')) return undefined
    if (server.dbName && cmd.includes(` ${server.dbName} `)) return 'postgresBackends'
    return /^postgres: \S+: (checkpointer|background writer|walwriter|autovacuum)/.test(cmd)
      ? 'postgresShared'
      : undefined
  }, 500)
  const sent = await api(url, key, 'POST', `/campaigns/${created.id}/send`)
  if (sent.status !== 200) throw new Error(`send failed: ${sent.status}`)
  let firstAt = 0
  // At least 15 minutes, and 5 ms a message for the biggest campaigns (1,000,000: 83 minutes).
  const deadline = Date.now() + Math.max(900_000, recipients * 5)
  // Transactional calls beside the campaign go on until it is sent (status 3): its end, where the sender reads
  // whether anything is left, is sampled too. The campaign's status is asked for only once the sink holds as many
  // messages besides the accepted calls' as it has recipients.
  let campaignSent = false
  const progress = { calls: 0, accepted: 0 }
  const beside = opts.transactionalPerSec
    ? transactionalCalls(url, key, DOMAIN, opts.transactionalPerSec, () => campaignSent, deadline, progress)
    : undefined
  // Their mail counts at the sink too: the send ends when the campaign's and theirs have all arrived.
  let extra: number | undefined = beside ? undefined : 0
  void beside?.then(() => (extra = progress.accepted))
  while (Date.now() < deadline) {
    const arrived = sink.count() - before
    if (!firstAt && arrived > 0) firstAt = Date.now()
    if (!campaignSent && beside && arrived - progress.accepted >= recipients)
      campaignSent =
        ((await api(url, key, 'GET', `/campaigns/${created.id}`)).json as { status: number }).status === 3
    if (extra !== undefined && arrived >= recipients + extra) break
    await new Promise((r) => setTimeout(r, 100))
  }
  const endedAt = Date.now()
  const serverCpu = processCpuMs(server.pid) - serverCpu0
  const machineCpu = machineBusyMs() - machine0
  const byGroup = groups.stop()
  const benchUsage = process.cpuUsage(bench0)
  byGroup.bench = (benchUsage.user + benchUsage.system) / 1000
  clearInterval(sampler)
  const delivered = sink.count() - before
  if (delivered < recipients + (extra ?? 0))
    throw new Error(`only ${delivered} of ${recipients} + ${extra ?? '?'} transactional arrived`)
  let transactional: TransactionalBeside | undefined
  if (beside) {
    await beside
    const { calls, accepted } = progress
    if (accepted === 0 || accepted < calls)
      throw new Error(`${accepted} of ${calls} transactional calls accepted`)
    if (!server.databaseUrl) throw new Error('transactional mail beside a campaign is read from PostgreSQL')
    const { sent, ...waits } = await transactionalWaits(server.databaseUrl)
    if (sent !== accepted) throw new Error(`${accepted} transactional calls accepted, ${sent} marked sent`)
    transactional = { calls, accepted, ...waits }
  }
  const total = (endedAt - started) / 1000
  let couponsAssigned: number | undefined
  if (opts.coupons) {
    const folders = (await api(url, key, 'GET', '/coupons/folders')).json as {
      id: number
      assigned: number
    }[]
    couponsAssigned = folders.find((f) => f.id === folderId)?.assigned ?? 0
    // Codes are unique per folder and a row holds one mail: `assigned` distinct codes went to as many mails.
    if (couponsAssigned !== recipients)
      throw new Error(`${couponsAssigned} codes handed out to ${recipients} recipients`)
  }
  return {
    recipients,
    totalSeconds: round(total),
    msgPerSec: Math.round(recipients / total),
    sendingMsgPerSec: Math.round(recipients / ((endedAt - (firstAt || started)) / 1000)),
    rssAtSendMb: Math.round(rssAtSend),
    peakRssMb: Math.round(peak),
    serverCpuMsPerMsg: round(serverCpu / recipients, 2),
    machineCpuMsPerMsg: round(machineCpu / recipients, 2),
    cpuMsPerMsgByProcess: Object.fromEntries(
      Object.entries(byGroup).map(([k, v]) => [k, round(v / recipients, 3)]),
    ),
    ...(couponsAssigned === undefined ? {} : { couponsAssigned }),
    ...(transactional ? { transactional } : {}),
  }
}
