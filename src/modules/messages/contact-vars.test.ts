import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { contactMergeVars, type ContactForMerge } from './contact-vars.js'

const contact = (over: Partial<ContactForMerge>): ContactForMerge => ({
  email: 'jana@example.cz',
  name: 'Jana',
  surname: 'Nováková',
  gender: '',
  company: null,
  city: '',
  street: '',
  zip: '',
  country: '',
  phone: null,
  pretitle: '',
  surtitle: '',
  birthday: null,
  nameday: null,
  vokativ: '',
  vokativ_s: '',
  custom_fields: null,
  ...over,
})

describe('contactMergeVars', () => {
  it('gives the subscriber fields, which a custom field of the same name cannot hide', () => {
    const vars = contactMergeVars(
      contact({ vokativ: 'Jano', custom_fields: { Name: 'X', vokativ: 'Y', size: 42 } }),
    )
    assert.deepEqual([vars.name, vars.vokativ, vars.vokativ_s, vars.size], ['Jana', 'Jano', '', 42])
  })

  it('shows a vokativ custom field where the person has no vokativ of their own', () => {
    const vars = contactMergeVars(
      contact({ custom_fields: { vokativ: 'Jano', vokativ_s: { value: 'Nováková', type: 'string' } } }),
    )
    assert.deepEqual([vars.vokativ, vars.vokativ_s], ['Jano', 'Nováková'])
  })
})
