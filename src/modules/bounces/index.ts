export { classifyInbound, classifySmtpReply, type BounceClass, type InboundReport } from './classify.js'
export { handleInbound, readInboundAddress } from './bounce-handler.js'
export { startBounceListener } from './bounce-listener.js'
