import type { ModuleDef } from '../registry.js'
import { domainRoutes } from './domains.routes.js'

/** Sending and transactional domains: DKIM keys, the DNS records to publish, and their verification. */
export const domainsModule: ModuleDef = { name: 'domains', apiRoutes: domainRoutes }
