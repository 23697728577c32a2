import { onFirstUse } from '../load-on-first-use.js'

/**
 * Country names → ISO 3166-1 alpha-2 codes. Shop hooks send a customer's country as the shop shows it, a name
 * in the shop's language ("Česká republika", "Slovensko", "Deutschland"); refusing it lost the whole update of
 * the contact. The names come from ICU's region names (Node ships full ICU), so nothing here needs upkeep as
 * countries are renamed. Lives in core because subscribers (which store the code) and segments (whose
 * conditions name a country) both read it, and segments sits below subscribers.
 */

/**
 * The languages whose names are read: those of a Central-European shop platform's customers, and the major
 * European ones. Each adds about 250 names; a name two languages give to different countries is dropped.
 */
// prettier-ignore
const LOCALES = [
  'en', 'cs', 'sk', 'de', 'pl', 'hu', 'fr', 'es', 'it', 'nl', 'pt', 'ro', 'sl', 'hr', 'sr', 'bg', 'uk', 'ru',
  'lt', 'lv', 'et', 'sv', 'da', 'fi', 'nb', 'el', 'tr',
]

/**
 * Codes ICU names that are no country of ISO 3166-1: groupings (EU, EZ, UN, QO), the unknown region (ZZ),
 * pseudo-locales (XA, XB), and the "exceptionally reserved" codes of islands and territories that ISO lists
 * under another country (AC, CP, CQ, DG, EA, IC, TA). XK (Kosovo) stays: not assigned by ISO, but the code the
 * EU, CLDR and shop platforms use. Withdrawn codes (DD, SU, YU, UK...) are left out by canonicalSelf below.
 */
// prettier-ignore
const NOT_COUNTRIES = new Set([
  'EU', 'EZ', 'UN', 'QO', 'ZZ', 'XA', 'XB', 'AC', 'CP', 'CQ', 'DG', 'EA', 'IC', 'TA',
])

/**
 * Names ICU does not give (it has the short name only) that shops and customers still write: the long forms
 * of CZ and SK that Czech and Slovak shop country lists use; the name most lists had before a renaming (TR in
 * 2022, MK in 2019); what people in this region call the UK; ISO's own wording for RU and KR. England and the
 * other parts of the UK are left out: no shop lists them as countries, and mapping one invites all four.
 */
const ALIASES: Record<string, string> = {
  'Czech Republic': 'CZ',
  'Česká republika': 'CZ',
  'Slovak Republic': 'SK',
  'Slovenská republika': 'SK',
  'United States of America': 'US',
  'Great Britain': 'GB',
  'Velká Británie': 'GB',
  'Veľká Británia': 'GB',
  Großbritannien: 'GB',
  'Russian Federation': 'RU',
  'Republic of Korea': 'KR',
  'Korea, Republic of': 'KR',
  Turkey: 'TR',
  Macedonia: 'MK',
  'Ivory Coast': 'CI',
}

/**
 * The form names are compared in: accents and case gone ("Ceska republika", "ČESKÁ REPUBLIKA"), dots and
 * apostrophes dropped ("U.S.A.", "Cote d'Ivoire"), other punctuation a space ("Guinea-Bissau"), and the English
 * spellings ICU writes differently from people: "&" as "and", "St." as "Saint", no "the" ("The Netherlands").
 */
export function countryNameKey(name: string): string {
  return name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[.'’]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .split(' ')
    .filter((word) => word !== 'the')
    .map((word) => (word === 'st' ? 'saint' : word))
    .join(' ')
}

/** ICU resolves a withdrawn code to its successor (DD to DE, UK to GB): only a code that stands for itself counts. */
const canonicalSelf = (code: string): boolean => Intl.getCanonicalLocales(`und-${code}`)[0] === `und-${code}`

function countryCodes(): string[] {
  const known = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' })
  const codes: string[] = []
  for (let a = 65; a <= 90; a++)
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b)
      if (!NOT_COUNTRIES.has(code) && known.of(code) !== undefined && canonicalSelf(code)) codes.push(code)
    }
  return codes
}

const withoutBrackets = (name: string): string => name.replace(/\s*\([^)]*\)/g, '')

/**
 * Built at the first name looked up, once per process (some 80 ms): most writes send a code and never need it.
 * Each name is also read without a part in brackets ("Myanmar (Burma)" as "Myanmar"). A name that stands for
 * two countries (in two languages, or "Saint Martin" for both halves of the island) is left out.
 */
const nameTable = onFirstUse((): Map<string, string> => {
  const table = new Map<string, string>()
  const ambiguous = new Set<string>()
  const add = (name: string, code: string) => {
    for (const form of [name, withoutBrackets(name)]) {
      const key = countryNameKey(form)
      // Short forms read as two letters ("R.U.", Romanian for the UK) could as well be codes: not names here.
      if (key.length <= 2) continue
      const before = table.get(key)
      if (before === undefined) table.set(key, code)
      else if (before !== code) ambiguous.add(key)
    }
  }
  const codes = countryCodes()
  for (const locale of LOCALES)
    for (const style of ['long', 'short'] as const) {
      const names = new Intl.DisplayNames([locale], { type: 'region', fallback: 'none', style })
      for (const code of codes) {
        const name = names.of(code)
        if (name !== undefined) add(name, code)
      }
    }
  for (const key of ambiguous) table.delete(key)
  for (const [name, code] of Object.entries(ALIASES)) table.set(countryNameKey(name), code)
  return table
})

/**
 * The two-letter code a country value stands for: two characters or fewer as given, upper-cased (what the API
 * always took, so stored values keep their meaning); a longer value read as a country's name, also with a part in
 * brackets after it ("United Kingdom (UK)", as some shops list countries). Undefined for a name no country has.
 * ICU has no table of three-letter codes, so "CZE" is not read; "USA" is, as a name.
 */
export function countryCode(value: string): string | undefined {
  const text = value.trim()
  if (text.length <= 2) return text.toUpperCase()
  const table = nameTable()
  return table.get(countryNameKey(text)) ?? table.get(countryNameKey(withoutBrackets(text)))
}
