import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors, ErrorList, IdParams, MessageError } from '../../core/http/schemas.js'
import { createTriggerService } from './trigger.service.js'

const TriggerBody = Type.Object({ email: Type.String({ minLength: 1, maxLength: 254 }) })
const Triggered = Type.Object({
  success: Type.Literal(true),
  trigger_id: Type.String({ description: 'the run id (automation-log `trigger_id`)' }),
})

export function triggerRoutes(app: ApiApp, ctx: AppContext): void {
  const service = createTriggerService(ctx)
  app.post(
    '/pipelines/:id/trigger',
    {
      schema: {
        tags: ['Automations'],
        operationId: 'triggerPipeline',
        summary: 'Run an automation for a subscriber',
        description:
          'The address must be subscribed to the automation\'s list (else 404 `{"errors":[..]}`; a malformed ' +
          'one 422); an unknown ' +
          'automation answers 404 `{message}`. With re-entry `once`, a subscriber the automation already ran ' +
          "for starts nothing and the answer carries the earlier run's `trigger_id`.",
        params: IdParams,
        body: TriggerBody,
        response: { 200: Triggered, ...commonErrors, 404: Type.Union([ErrorList, MessageError]) },
      },
    },
    async (req) => service.trigger(req.account.id, req.params.id, req.body.email),
  )
}
