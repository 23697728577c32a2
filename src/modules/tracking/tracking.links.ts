// Pure link signing, which mail that cannot import this module (confirmation mail) needs too, lives in core.
export {
  readClickToken,
  readMessageToken,
  trackingLinks,
  type LinkCtx,
} from '../../core/mail/tracking-links.js'
