import { it } from 'node:test'
import assert from 'node:assert/strict'
import { countryCode } from './country-names.js'

it('countryCode reads a country name in the languages shops send it in, and keeps a two-letter value', () => {
  const cases: [value: string, code: string | undefined][] = [
    // Two characters or fewer: as the API always took them, upper-cased, whatever they are.
    ['cz', 'CZ'],
    [' SK ', 'SK'],
    ['UK', 'UK'],
    ['', ''],
    // ICU's names, in the languages of the shop's customers, compared without accents, case or punctuation.
    ['Slovensko', 'SK'],
    ['Deutschland', 'DE'],
    ['Česko', 'CZ'],
    ['CESKO', 'CZ'],
    ['Magyarország', 'HU'],
    ['Österreich', 'AT'],
    ['Polska', 'PL'],
    ['Россия', 'RU'],
    ['Czechia', 'CZ'],
    ['Bosnia and Herzegovina', 'BA'],
    ['Saint Lucia', 'LC'],
    ['Guinea Bissau', 'GW'],
    ["Cote d'Ivoire", 'CI'],
    ['The Netherlands', 'NL'],
    ['Myanmar', 'MM'],
    ['United Kingdom (UK)', 'GB'],
    ['U.S.A.', 'US'],
    // The long forms ICU does not give.
    ['Česká republika', 'CZ'],
    ['Ceska Republika', 'CZ'],
    ['Czech Republic', 'CZ'],
    ['Slovenská republika', 'SK'],
    ['United States of America', 'US'],
    ['Great Britain', 'GB'],
    ['Turkey', 'TR'],
    // Germany's withdrawn code DD has ICU's name "Germany" too: the name must still be DE's, not dropped as ambiguous.
    ['Germany', 'DE'],
    // No country: a grouping, a name two countries share, a three-letter code, nonsense.
    ['European Union', undefined],
    ['Saint Martin', undefined],
    ['CZE', undefined],
    ['Atlantis', undefined],
  ]
  for (const [value, code] of cases) assert.equal(countryCode(value), code, value)
})
