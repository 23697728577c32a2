import { Type } from '@sinclair/typebox'
import { Nullable } from '../../core/http/schemas.js'

export const SetWebhookBody = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'Target URL for campaign statistics' }),
})

export const Success = Type.Object({ success: Type.Boolean() })

/** contract §9: `{url, secret?}`; `url` is null when none is set; `active` false after a 410 Gone. */
export const WebhookSettings = Type.Object({
  url: Nullable(Type.String()),
  secret: Type.Optional(Type.String({ description: 'Standard Webhooks signing secret (whsec_...)' })),
  active: Type.Optional(Type.Boolean()),
})
