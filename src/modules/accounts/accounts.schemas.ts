import { Type } from '@sinclair/typebox'

export const PlanSchema = Type.Union([Type.Literal('free'), Type.Literal('paid'), Type.Literal('marketer')])
export const CreateAccountBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  plan: Type.Optional(PlanSchema),
})
export const CreatedAccountReply = Type.Object({ account_id: Type.Integer(), api_key: Type.String() })
export const SetPlanBody = Type.Object({ plan: PlanSchema })
export const AccountReply = Type.Object({ account_id: Type.Integer(), name: Type.String(), plan: PlanSchema })
export const ApiKeyReply = Type.Object({ api_key: Type.String() })
export const RevokeKeyBody = Type.Object({ api_key: Type.String({ minLength: 1, maxLength: 512 }) })
export const RevokedReply = Type.Object({ deleted: Type.Boolean() })
