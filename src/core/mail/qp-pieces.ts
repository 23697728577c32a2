import { qpEncodeText } from './quoted-printable.js'

const SOFT_BREAK = '=\r\n'
/** Longest line of quoted-printable, its soft break's `=` included (RFC 2045 §6.7). */
const LINE_MAX = 76
const EQUALS = 61

/**
 * A stretch of a text part in quoted-printable that starts at column 0 and ends at a line end (a soft break
 * `=` CRLF where the text does not): such pieces can follow one another in any order and the whole is still
 * valid quoted-printable, in lines of at most 76, and still its own DKIM relaxed form (quoted-printable.ts).
 */
export function qpPiece(text: string): string {
  const qp = qpEncodeText(text)
  return qp && !qp.endsWith('\r\n') ? qp + SOFT_BREAK : qp
}

/** The characters of a piece's line that ends at `end` (its CRLF), a soft break's `=` not counted. */
const lineWidth = (piece: string, start: number, end: number) =>
  end - start - (piece.charCodeAt(end - 1) === EQUALS ? 1 : 0)

/**
 * A text part put together from pieces (qpPiece), some encoded once for many messages (a campaign's template
 * text), some for this message alone (merge values, links). Before, every message encoded its whole 10 KB of
 * text again, most of it the same for every recipient, and canonicalised it for DKIM (issue 11, profiled:
 * about a quarter of a signing thread's work besides the RSA signature).
 *
 * A piece whose first line fits on the line the pieces before it left open goes on that line: `Hello *|name|*`
 * is one line, not `Hello=20=` and the name on lines of their own. Joining keeps the pieces' guarantees: a
 * piece never ends in a bare space or starts a line with a dot, so the joined line has no run of blanks, no
 * blank at its end and no dot at its start.
 */
export class QpPart {
  readonly pieces: string[] = []
  /** Characters on the open last line (before its soft break); -1 when the pieces end in a hard break. */
  private open = -1

  /** A piece encoded beforehand. */
  add(piece: string): void {
    if (!piece) return
    const firstEnd = piece.indexOf('\r\n')
    const first = lineWidth(piece, 0, firstEnd)
    const soft = piece.charCodeAt(firstEnd - 1) === EQUALS
    const last = this.pieces.length - 1
    const joined = this.open >= 0 && this.open + first + (soft ? 1 : 0) <= LINE_MAX
    // The soft break dropped: a sliced string, not a copy of the piece.
    if (joined) this.pieces[last] = this.pieces[last]!.slice(0, -SOFT_BREAK.length)
    this.pieces.push(piece)
    const lastEnd = piece.length - 2
    if (piece.charCodeAt(lastEnd - 1) !== EQUALS) this.open = -1
    else if (firstEnd === lastEnd) this.open = (joined ? this.open : 0) + first
    else this.open = lineWidth(piece, piece.lastIndexOf('\r\n', lastEnd - 1) + 2, lastEnd)
  }

  /** Text of this message's own (a value, a link): encoded here. */
  text(text: string): void {
    if (text) this.add(qpPiece(text))
  }

  /** The part's encoded text; its last soft break, which would only join an empty line, left out. */
  encoded(): string {
    const qp = this.pieces.join('')
    return qp.endsWith(SOFT_BREAK) ? qp.slice(0, -SOFT_BREAK.length) : qp
  }
}
