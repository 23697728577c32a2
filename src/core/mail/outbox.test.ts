import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createOutboxMailer } from './outbox.js'

describe('outbox mailer', () => {
  it('keeps no reference to a message once sendRaw settles: its memory, filled at once, was written unchanged, after the Return-Path', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidings-outbox-'))
    try {
      const mailer = createOutboxMailer(dir)
      const text = `From: news@shop.example\r\nSubject: hi\r\n\r\n${'abc '.repeat(50_000)}\r\n`
      const raw = Buffer.from(text)
      const sent = await mailer.sendRaw({ from: 'b@shop.example', to: ['r@example.cz'] }, raw, '<1@x>')
      raw.fill(0x41)
      assert.deepEqual(sent.accepted, ['r@example.cz'])
      const files = fs.readdirSync(dir)
      assert.equal(files.length, 1)
      assert.ok(
        fs.readFileSync(path.join(dir, files[0]!), 'utf8') === `Return-Path: <b@shop.example>\r\n${text}`,
        'the file holds the message as sent, led by its envelope sender as an MTA delivers it',
      )
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
