import { spawn, spawnSync } from 'node:child_process'
import { freePort } from '../../scripts/pg-cluster.js'

export interface PostfixSink {
  url: string
  pid: number
  /** Messages accepted so far (smtp-sink's running counter). */
  count(): number
  stop(): void
}

/** Postfix's smtp-sink on loopback: the fastest SMTP server there is to measure a sender against. */
export async function startPostfixSink(): Promise<PostfixSink | undefined> {
  const which = spawnSync('sh', ['-c', 'command -v smtp-sink || ls /usr/sbin/smtp-sink'], {
    encoding: 'utf8',
  })
  const bin = which.stdout.trim().split('\n')[0]
  if (!bin) return undefined
  const port = await freePort()
  const args = ['-c', ...(process.getuid?.() === 0 ? ['-u', 'nobody'] : []), `127.0.0.1:${port}`, '1000']
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'ignore'] })
  let last = 0
  let tail = ''
  child.stdout.on('data', (c: Buffer) => {
    tail = (tail + c.toString()).slice(-200)
    const all = [...tail.matchAll(/mesg=(\d+)/g)]
    const m = all[all.length - 1]
    if (m?.[1]) last = Number(m[1])
  })
  await new Promise((r) => setTimeout(r, 300))
  return {
    url: `smtp://127.0.0.1:${port}`,
    pid: child.pid!,
    count: () => last,
    stop: () => child.kill('SIGTERM'),
  }
}
