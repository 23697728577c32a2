export { bounceHostFor } from './dns-records.js'
export { dkimKeyOf, findDomainForAddress, resolveSenderDomain, type SenderDomain } from './find-domain.js'
export type { DomainRow, DomainType } from './domains.schemas.js'
export { domains } from './domains.table.js'
