import type { ModuleDef } from '../registry.js'
import { domainRoutes } from './domains.routes.js'

export { bounceHostFor } from './dns-records.js'
export { dkimKeyOf, findDomainForAddress, resolveSenderDomain, type SenderDomain } from './find-domain.js'
export type { DomainRow, DomainType } from './domains.schemas.js'
export { domains } from './domains.table.js'

/** Sending and transactional domains: DKIM keys, the DNS records to publish, and their verification. */
export const domainsModule: ModuleDef = { name: 'domains', apiRoutes: domainRoutes }
