import { Type, type Static } from '@sinclair/typebox'
import { sqlDateTime } from '../../core/http/formats.js'
import type { SegmentRow } from './segments.repo.js'

const FILTER_DOC =
  'A condition (contract §6): {"all":[..]}, {"any":[..]}, {"not":c}, ' +
  '{"field":"city","op":"eq|neq|contains|gt|lt|exists","value":..}, {"tag":"vip"}, {"opened":"<node id>"}, ' +
  '{"clicked":"<node id>"}, {"purchased":{"days":30}}, {"event":{"category":"..","action":".."}} ' +
  '(a tracker event of the subscriber; action optional), {"in_list":3}.'

/** The filter is checked by parseCondition (condition.ts), which names each bad part by its path. */
export const CreateSegmentBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  filter: Type.Unknown({ description: FILTER_DOC }),
})
export type CreateSegmentInput = Static<typeof CreateSegmentBody>

export const SegmentObject = Type.Object({
  id: Type.String({ description: 'Random string id; campaigns name it in recepient_lists.segments' }),
  name: Type.String(),
  list_id: Type.Integer(),
  filter: Type.Unknown({ description: 'The condition as stored (normalised)' }),
  subscribers: Type.Integer({ description: 'Subscribed (status 1) members of the list that match now' }),
  created_at: Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
})
export type SegmentObjectT = Static<typeof SegmentObject>

export function toSegmentObject(row: SegmentRow, subscribers: number): SegmentObjectT {
  return {
    id: row.id,
    name: row.name,
    list_id: row.listId,
    filter: row.filter,
    subscribers,
    created_at: sqlDateTime(row.createdAt),
  }
}
