import { Type, type Static } from '@sinclair/typebox'
import { Flag, Nullable } from '../../core/http/schemas.js'

/**
 * `POST /transactional/send-message` and `send-template` (api.md, contract §9). The rules TypeBox cannot say
 * (text or html, reserved merge-tag names, size limits, base64) live in transactional.validate.ts. Recipient
 * addresses are plain strings here: an invalid one is a rejected recipient, counted, not a 422.
 */

const Address = Type.String({ format: 'email', maxLength: 254 })
/** Clients send absent optional addresses as null or ''. */
const OptionalAddress = Type.Optional(Type.Union([Address, Type.Literal(''), Type.Null()]))

/** A copy's address, or a mailbox (`"Name" <address>`) holding one: checked by transactional.validate.ts. */
const CopyAddress = Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()]))

const Recipient = Type.Object({
  /** An address, or a mailbox (`"Name" <address>`) as mail libraries write one; its name stands in for `name`. */
  email: Type.String({ minLength: 1, maxLength: 1000 }),
  name: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  /** One cc / bcc per entry; more of them by repeating the entry with the same email (api.md rule 2). */
  cc: CopyAddress,
  bcc: CopyAddress,
})

const MergeVar = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  /** Scalars as they are; anything else is inserted as its JSON. */
  content: Type.Optional(Type.Unknown()),
})

const RecipientVars = Type.Object({
  rcpt: Type.String({ maxLength: 1000 }),
  vars: Type.Array(MergeVar),
})

/**
 * The `type` becomes the part's Content-Type header: no control characters, so a value such as
 * "text/plain\r\nX-Header: 1" is refused rather than sent as a mangled header.
 */
const NO_CONTROL_CHARACTERS = '^[^\\u0000-\\u001f\\u007f]+$'

const Attachment = Type.Object({
  type: Type.String({ minLength: 1, maxLength: 255, pattern: NO_CONTROL_CHARACTERS }),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  content: Type.String({ description: 'base64' }),
})

const common = {
  from_name: Type.String({ minLength: 1, maxLength: 255 }),
  from_email: Address,
  reply_to: OptionalAddress,
  text: Type.Optional(Nullable(Type.String())),
  amp_html: Type.Optional(
    Nullable(
      Type.String({ description: 'AMP for Email version (text/x-amp-html), beside html; not tracked' }),
    ),
  ),
  to: Type.Array(Recipient, { minItems: 1 }),
  global_merge_vars: Type.Optional(Type.Array(MergeVar)),
  merge_vars: Type.Optional(Type.Array(RecipientVars)),
  attachments: Type.Optional(Type.Array(Attachment)),
  options: Type.Optional(
    Type.Object({
      click_tracking: Type.Optional(Flag()),
      open_tracking: Type.Optional(Flag()),
    }),
  ),
}

/**
 * Optional collections a client may send as null. Not unions in the schema, since an error inside a union is
 * reported at the union (`message.attachments`) rather than at its field (`message.attachments.0.name`); the
 * routes drop these nulls before validation instead.
 */
export const NULLABLE_COLLECTIONS = ['global_merge_vars', 'merge_vars', 'attachments', 'options'] as const

export const SendMessageBody = Type.Object({
  message: Type.Object({
    ...common,
    subject: Type.String({ minLength: 1, maxLength: 998 }),
    html: Type.Optional(Nullable(Type.String())),
  }),
})
export type SendMessageInput = Static<typeof SendMessageBody>['message']

export const SendTemplateBody = Type.Object({
  message: Type.Object({
    ...common,
    template_id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
    /** The template's subject when absent or empty. */
    subject: Type.Optional(Nullable(Type.String({ maxLength: 998 }))),
  }),
})
export type SendTemplateInput = Static<typeof SendTemplateBody>['message']

/** What both routes share once the html and subject are known. */
export type MessageInput = Omit<SendMessageInput, 'subject' | 'html'> & {
  subject: string
  html?: string | null | undefined
}

export const SendResults = Type.Object({
  results: Type.Object({
    total_rejected_recipients: Type.Integer(),
    total_accepted_recipients: Type.Integer(),
    id: Type.Integer({ description: 'message batch id' }),
  }),
})
export type SendResultsT = Static<typeof SendResults>
