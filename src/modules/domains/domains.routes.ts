import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors } from '../../core/http/schemas.js'
import { createDomainVerifyService } from './domain-verify.service.js'
import {
  CreateDomainBody,
  DeletedDomain,
  DomainConflict,
  DomainObject,
  DomainOrIdParams,
  DomainParams,
  DomainTypeQuery,
} from './domains.schemas.js'
import { createDomainService, queryType } from './domains.service.js'

const tags = ['Domains']

export function domainRoutes(app: ApiApp, ctx: AppContext): void {
  const domains = createDomainService(ctx)
  const verifier = createDomainVerifyService(ctx)

  app.post(
    '/domains',
    {
      schema: {
        operationId: 'createDomain',
        tags,
        summary: 'Add a sending or transactional domain; returns the DNS records to publish',
        body: CreateDomainBody,
        response: { 200: DomainObject, ...commonErrors },
      },
    },
    async (req) => domains.create(req.account.id, req.body),
  )
  app.get(
    '/domains',
    {
      schema: {
        operationId: 'listDomains',
        tags,
        summary: 'Domains of the account with their DNS records',
        response: { 200: Type.Array(DomainObject), ...commonErrors },
      },
    },
    async (req) => domains.all(req.account.id),
  )
  app.post(
    '/domains/:domain/verify',
    {
      schema: {
        operationId: 'verifyDomain',
        tags,
        summary: 'Check the DNS records of a domain and set valid (DKIM key and SPF present)',
        params: DomainParams,
        querystring: DomainTypeQuery,
        response: { 200: DomainObject, ...commonErrors },
      },
    },
    async (req) => verifier.verify(req.account.id, req.params.domain, queryType(req.query.type)),
  )
  app.delete(
    '/domains/:domain',
    {
      schema: {
        tags,
        summary: 'Remove a domain; type is required when the account holds both variants',
        description:
          'The path takes a domain name or the numeric `id` of one variant (as GET /domains shows it); an id ' +
          'names exactly one variant, so `type` then only has to agree with it (404 otherwise).',
        operationId: 'deleteDomain',
        params: DomainOrIdParams,
        querystring: DomainTypeQuery,
        response: { 200: DeletedDomain, 409: DomainConflict, ...commonErrors },
      },
    },
    async (req) => domains.remove(req.account.id, req.params.domain, queryType(req.query.type)),
  )
}
