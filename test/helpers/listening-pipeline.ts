import type { TestApp } from './app.js'

/**
 * An active automation of the account (through the API) whose trigger is `trigger`: signals of its kind are
 * written only while one listens. It tags whoever it starts for and ends. Its id.
 */
export async function createListeningPipeline(
  t: TestApp,
  trigger: Record<string, unknown> & { type: string },
  key?: string,
): Promise<number> {
  const list = await t.req('POST', '/lists', { body: { name: 'Automation list' }, ...(key ? { key } : {}) })
  if (list.status !== 200) throw new Error(`list not created: ${list.text}`)
  const res = await t.req('POST', '/pipelines', {
    ...(key ? { key } : {}),
    body: {
      name: `On ${trigger.type}`,
      list_id: list.body.id,
      trigger,
      actions: [
        { id: 't1', type: 'tag', properties: { name: 'Tag', tag: 'reached' }, next: ['e1'] },
        { id: 'e1', type: 'end', properties: { name: 'End' }, next: null },
      ],
    },
  })
  if (res.status !== 200) throw new Error(`pipeline not created: ${res.text}`)
  return res.body.id as number
}
