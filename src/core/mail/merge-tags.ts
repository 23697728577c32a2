/**
 * Merge tags (contract §7): `*|name|*` inserts a value (HTML-escaped in HTML), `{*|name|*}` inserts it raw,
 * `*|IF:name|*…*|ELSE:|*…*|END:IF|*` chooses a branch; names are case-insensitive; unknown tags render empty.
 * A template is compiled once and rendered per recipient: campaign sending calls render() in its hot loop.
 */
export type MergeValue = string | number | boolean | null | undefined

export interface MergeData {
  /** Values by lower-cased name. */
  vars: Record<string, MergeValue>
  /** Special tags (UNSUB, WEBVERSION, CONFIRM, COUPON:12 …): name upper-cased, argument after the colon. */
  special?: (name: string, arg: string | undefined) => string | undefined
}

export type RenderMode = 'html' | 'text'

type Node =
  | { kind: 'text'; text: string; index: number }
  | { kind: 'tag'; name: string; arg: string | undefined; raw: boolean }
  | { kind: 'if'; name: string; then: Node[]; else: Node[] }

export interface CompiledTemplate {
  render(data: MergeData, mode: RenderMode): string
  /**
   * The same rendering as pieces in order: the template's own text as its index in `texts`, values as rendered
   * strings. A caller can do work on the template's text once (campaign mail encodes it once per campaign) and
   * only the values per recipient.
   */
  renderParts(data: MergeData, mode: RenderMode, out: (number | string)[]): void
  /** The template's text between tags, by the index renderParts gives. */
  readonly texts: readonly string[]
  /** Lower-cased names of every tag used (for validation and for loading only what is needed). */
  readonly names: ReadonlySet<string>
  /**
   * Every tag inserts one value, escaped in HTML, under a name without blanks: no raw value, no IF block, no block
   * of HTML (recommendations). Such a template's HTML keeps its structure whatever the values, and its tags
   * survive a conversion that wraps text at blanks (the text part made once, body-render.ts).
   */
  readonly plainValuesOnly: boolean
}

/**
 * Tags whose value the service builds as a block of HTML (recommended products), every field in it escaped
 * as it was built. In HTML such a tag inserts, raw, the variable named by htmlBlockVar (`html|recommend:12:4`);
 * in text, its own variable (`recommend:12:4`). No tag can name a variable holding `|`, so only the sender that
 * set it can fill it.
 */
const BLOCK_TAGS: ReadonlySet<string> = new Set(['recommend'])

/** The variable holding the HTML form of a block tag's value. */
export const htmlBlockVar = (name: string) => `html|${name}`

const TAG_RE = /\{\*\|([^|*{}]{1,200})\|\*\}|\*\|([^|*]{1,200})\|\*/g

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!)
}

function truthy(v: MergeValue): boolean {
  if (v === null || v === undefined || v === false) return false
  const s = String(v).trim()
  return s !== '' && s !== '0' && s.toLowerCase() !== 'false'
}

export function compileTemplate(source: string): CompiledTemplate {
  const root: Node[] = []
  // Stack of open IF blocks: where their nodes currently go, and the list that holds each.
  const stack: { node: Extract<Node, { kind: 'if' }>; inElse: boolean; parent: Node[] }[] = []
  const names = new Set<string>()
  const texts: string[] = []
  const text = (t: string): Node => ({ kind: 'text', text: t, index: texts.push(t) - 1 })
  const target = (): Node[] => {
    const top = stack[stack.length - 1]
    return top ? (top.inElse ? top.node.else : top.node.then) : root
  }
  let last = 0
  let plainValuesOnly = true
  for (const m of source.matchAll(TAG_RE)) {
    if (m.index > last) target().push(text(source.slice(last, m.index)))
    last = m.index + m[0].length
    const raw = m[1] !== undefined
    const body = (m[1] ?? m[2]!).trim()
    const colon = body.indexOf(':')
    const head = (colon >= 0 ? body.slice(0, colon) : body).trim().toUpperCase()
    const arg = colon >= 0 ? body.slice(colon + 1).trim() : undefined
    if (raw || /\s/.test(m[2]!) || ['IF', 'ELSE', 'END'].includes(head) || BLOCK_TAGS.has(head.toLowerCase()))
      plainValuesOnly = false
    if (head === 'IF' && arg) {
      const node: Extract<Node, { kind: 'if' }> = { kind: 'if', name: arg.toLowerCase(), then: [], else: [] }
      names.add(node.name)
      const parent = target()
      parent.push(node)
      stack.push({ node, inElse: false, parent })
    } else if (head === 'ELSE' && stack.length) {
      stack[stack.length - 1]!.inElse = true
    } else if (head === 'END' && stack.length) {
      stack.pop()
    } else if (head === 'IF' || head === 'ELSE' || head === 'END') {
      // A stray block tag renders nothing, like any unknown tag.
    } else {
      const name = body.toLowerCase()
      names.add(name)
      target().push({ kind: 'tag', name: colon >= 0 ? head.toLowerCase() : name, arg, raw })
    }
  }
  if (last < source.length) target().push(text(source.slice(last)))
  // An IF never closed is no block: its tags render nothing, as stray ones do, and what follows them stays. Read as
  // a block running to the end, one missing END:IF would silently drop the rest of a mail for everyone it is false
  // for (the footer and its unsubscribe link with it). Innermost first, so an outer one takes the inner's nodes.
  for (const { node, parent } of stack.reverse())
    parent.splice(parent.indexOf(node), 1, ...node.then, ...node.else)

  /** Text nodes go out as their text, or as their index when `indices`. */
  const renderNodes = (
    nodes: Node[],
    data: MergeData,
    mode: RenderMode,
    out: (number | string)[],
    indices: boolean,
  ): void => {
    for (const n of nodes) {
      if (n.kind === 'text') out.push(indices ? n.index : n.text)
      else if (n.kind === 'if') {
        const v = Object.hasOwn(data.vars, n.name) ? data.vars[n.name] : undefined
        renderNodes(truthy(v) ? n.then : n.else, data, mode, out, indices)
      } else {
        const special = data.special?.(n.name.toUpperCase(), n.arg)
        const name = n.arg === undefined ? n.name : `${n.name}:${n.arg.toLowerCase()}`
        if (mode === 'html' && n.arg !== undefined && BLOCK_TAGS.has(n.name)) {
          const block = data.vars[htmlBlockVar(name)]
          if (typeof block === 'string' && Object.hasOwn(data.vars, htmlBlockVar(name))) out.push(block)
          continue
        }
        const value = special ?? (Object.hasOwn(data.vars, name) ? data.vars[name] : undefined)
        if (value === null || value === undefined) continue
        const s = String(value)
        // Special tags produce URLs we built ourselves; in HTML they are still attribute-safe once escaped.
        out.push(mode === 'html' && !n.raw ? escapeHtml(s) : s)
      }
    }
  }

  return {
    names,
    texts,
    plainValuesOnly,
    render(data, mode) {
      const out: string[] = []
      renderNodes(root, data, mode, out, false)
      return out.join('')
    },
    renderParts(data, mode, out) {
      renderNodes(root, data, mode, out, true)
    },
  }
}

/** Renders a header value (subject, names): plain text with no line breaks, whatever the data holds. */
export function renderHeader(t: CompiledTemplate, data: MergeData): string {
  return t.render(data, 'text').replace(/[\r\n]+/g, ' ')
}

/** Builds the lower-cased variable map from subscriber fields and custom fields (scalar or {value,type}). */
export function mergeVars(
  fields: Record<string, MergeValue>,
  customFields: Record<string, unknown> = {},
): Record<string, MergeValue> {
  // No prototype: a tag named like an Object method (*|constructor|*) must render empty, not a function.
  const vars: Record<string, MergeValue> = Object.create(null) as Record<string, MergeValue>
  for (const [k, v] of Object.entries(customFields)) {
    const value = v !== null && typeof v === 'object' && 'value' in v ? (v as { value: unknown }).value : v
    vars[k.toLowerCase()] =
      value === null || value === undefined || typeof value !== 'object'
        ? (value as MergeValue)
        : JSON.stringify(value)
  }
  // Subscriber fields win over custom fields of the same name.
  for (const [k, v] of Object.entries(fields)) vars[k.toLowerCase()] = v
  return vars
}

/**
 * The arguments of every `*|NAME:arg|*` tag in the sources (NAME case-insensitive; arguments trimmed, each once),
 * read as compileTemplate reads tags. Lets a sender learn what a mail needs (COUPON folders) without compiling it.
 */
export function tagArguments(sources: readonly (string | null | undefined)[], name: string): string[] {
  const wanted = name.toUpperCase()
  const found = new Set<string>()
  for (const source of sources) {
    if (!source?.includes('*|')) continue
    for (const m of source.matchAll(TAG_RE)) {
      const body = (m[1] ?? m[2]!).trim()
      const colon = body.indexOf(':')
      if (colon < 0 || body.slice(0, colon).trim().toUpperCase() !== wanted) continue
      const arg = body.slice(colon + 1).trim()
      if (arg) found.add(arg)
    }
  }
  return [...found]
}
