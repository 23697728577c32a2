import type { FieldErrorBag } from '../../core/http/errors.js'
import { CONTACT_FIELDS } from '../segments/index.js'
import type { PipelineTrigger, TriggerType } from './pipeline-graph.js'
import { isObject, join, oneOf, optionalText, requiredText } from './validate-helpers.js'

export const TRIGGER_TYPES: readonly TriggerType[] = ['subscribe', 'api', 'event', 'purchase', 'tag', 'date']

/** Contact columns that hold a date a yearly trigger can fire on; any other name is a custom field. */
const DATE_FIELDS = new Set(['birthday', 'nameday'])

/**
 * Contract §6 triggers: `{type, ...}` with what each type needs (event: category or action; tag: tag; date: a
 * date field). Absent: `subscribe`. Keys another type would use are dropped, so the engine reads only what
 * applies. Errors name `trigger.<key>`.
 */
export function parseTrigger(
  bag: FieldErrorBag,
  input: unknown,
  path = 'trigger',
): PipelineTrigger | undefined {
  if (input === undefined || input === null) return { type: 'subscribe' }
  if (!isObject(input)) {
    bag.add(path, 'The trigger must be an object with a type.')
    return undefined
  }
  const type = oneOf(bag, input.type, join(path, 'type'), TRIGGER_TYPES)
  if (!type) return undefined
  switch (type) {
    case 'subscribe':
    case 'api':
      return { type }
    case 'event': {
      const category = optionalText(bag, input.category, join(path, 'category'), 255)?.trim() || undefined
      const action = optionalText(bag, input.action, join(path, 'action'), 255)?.trim() || undefined
      if (!category && !action && !bag.errors[join(path, 'category')] && !bag.errors[join(path, 'action')]) {
        bag.add(join(path, 'category'), 'The category field is required when action is not present.')
        return undefined
      }
      return { type, ...(category ? { category } : {}), ...(action ? { action } : {}) }
    }
    case 'purchase': {
      const shop = optionalText(bag, input.shop, join(path, 'shop'), 255)?.trim() || undefined
      return shop ? { type, shop } : { type }
    }
    case 'tag': {
      const tag = requiredText(bag, input.tag, join(path, 'tag'), 50)
      return tag === undefined ? undefined : { type, tag }
    }
    case 'date': {
      const at = join(path, 'field')
      const raw = requiredText(bag, input.field, at, 100)
      if (raw === undefined) return undefined
      const field = raw.toLowerCase()
      if (CONTACT_FIELDS.has(field) && !DATE_FIELDS.has(field)) {
        bag.add(at, 'The field must be birthday, nameday or a custom field.')
        return undefined
      }
      return { type, field }
    }
  }
}
