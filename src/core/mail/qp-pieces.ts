import { qpEncodeText } from './quoted-printable.js'

const SOFT_BREAK = '=\r\n'

/**
 * A stretch of a text part in quoted-printable that starts at column 0 and ends at a line end (a soft break
 * `=` CRLF where the text does not): such pieces can follow one another in any order and the whole is still
 * valid quoted-printable, in lines of at most 76, and still its own DKIM relaxed form (quoted-printable.ts).
 */
export function qpPiece(text: string): string {
  const qp = qpEncodeText(text)
  return qp && !qp.endsWith('\r\n') ? qp + SOFT_BREAK : qp
}

/**
 * A text part put together from pieces (qpPiece), some encoded once for many messages (a campaign's template
 * text), some for this message alone (merge values, links). Before, every message encoded its whole 10 KB of
 * text again, most of it the same for every recipient, and canonicalised it for DKIM (issue 11, profiled:
 * about a quarter of a signing thread's work besides the RSA signature).
 */
export class QpPart {
  readonly pieces: string[] = []

  /** A piece encoded beforehand. */
  add(piece: string): void {
    if (piece) this.pieces.push(piece)
  }

  /** Text of this message's own (a value, a link): encoded here. */
  text(text: string): void {
    if (text) this.pieces.push(qpPiece(text))
  }

  /** The part's encoded text; its last soft break, which would only join an empty line, left out. */
  encoded(): string {
    const qp = this.pieces.join('')
    return qp.endsWith(SOFT_BREAK) ? qp.slice(0, -SOFT_BREAK.length) : qp
  }
}
