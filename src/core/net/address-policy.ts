import net from 'node:net'

/**
 * Which IP addresses a customer-supplied URL may reach. Everything that is not plainly a public unicast
 * address is refused: loopback, private (RFC 1918, ULA), carrier-grade NAT, link-local (where cloud metadata
 * services answer, 169.254.169.254 and fd00:ec2::254), multicast, documentation and reserved ranges. IPv6
 * forms that carry an IPv4 address (mapped, NAT64, 6to4) are judged by that IPv4 address.
 */

type Range = readonly [bytes: readonly number[], prefix: number, label: string]

const V4: readonly Range[] = [
  [[0, 0, 0, 0], 8, 'this network'],
  [[10, 0, 0, 0], 8, 'private'],
  [[100, 64, 0, 0], 10, 'carrier-grade NAT'],
  [[127, 0, 0, 0], 8, 'loopback'],
  [[169, 254, 0, 0], 16, 'link-local'],
  [[172, 16, 0, 0], 12, 'private'],
  [[192, 0, 0, 0], 24, 'reserved'],
  [[192, 0, 2, 0], 24, 'documentation'],
  [[192, 88, 99, 0], 24, 'reserved'],
  [[192, 168, 0, 0], 16, 'private'],
  [[198, 18, 0, 0], 15, 'benchmarking'],
  [[198, 51, 100, 0], 24, 'documentation'],
  [[203, 0, 113, 0], 24, 'documentation'],
  [[224, 0, 0, 0], 4, 'multicast'],
  [[240, 0, 0, 0], 4, 'reserved'],
]

const V6: readonly Range[] = [
  // ::/96 holds the unspecified address, loopback (::1) and the deprecated IPv4-compatible form.
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 96, 'loopback or unspecified'],
  [[0, 0x64, 0xff, 0x9b, 0, 1], 48, 'local NAT64'],
  [[1, 0, 0, 0, 0, 0, 0, 0], 64, 'discard'],
  [[0x20, 0x01, 0, 0], 23, 'IETF protocol assignments'],
  [[0x20, 0x01, 0x0d, 0xb8], 32, 'documentation'],
  [[0x3f, 0xff], 20, 'documentation'],
  [[0xfc, 0], 7, 'private'],
  [[0xfe, 0x80], 10, 'link-local'],
  [[0xfe, 0xc0], 10, 'site-local'],
  [[0xff, 0], 8, 'multicast'],
]

function inRange(addr: readonly number[], [bytes, prefix]: Range): boolean {
  for (let bit = 0; bit < prefix; bit += 8) {
    const take = Math.min(8, prefix - bit)
    const mask = (0xff << (8 - take)) & 0xff
    if (((addr[bit / 8] ?? 0) & mask) !== ((bytes[bit / 8] ?? 0) & mask)) return false
  }
  return true
}

function v4Bytes(ip: string): number[] {
  return ip.split('.').map(Number)
}

/** The 16 bytes of an IPv6 address in any textual form net.isIPv6 accepts (zone ids are dropped). */
export function v6Bytes(ip: string): number[] {
  // A trailing dotted quad (`::ffff:1.2.3.4`) is two hex groups written another way.
  const text = ip
    .replace(/%.*$/, '')
    .replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a: string, b: string, c: string, d: string) =>
      [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)].map((n) => n.toString(16)).join(':'),
    )
  const parse = (s: string) => (s ? s.split(':').map((g) => parseInt(g, 16)) : [])
  const [head = '', rest] = text.split('::') as [string, string | undefined]
  const left = parse(head)
  const right = parse(rest ?? '')
  const groups =
    rest === undefined
      ? left
      : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right]
  return groups.flatMap((g) => [(g >> 8) & 0xff, g & 0xff])
}

/** The IPv4 address an IPv6 address stands for (mapped, NAT64 well-known prefix, 6to4), if any. */
function embeddedV4(b: readonly number[]): number[] | undefined {
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0)
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return b.slice(12, 16)
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return b.slice(12, 16)
  if (b[0] === 0x20 && b[1] === 0x02) return b.slice(2, 6)
  return undefined
}

/**
 * Why `ip` may not be reached, or undefined when it is a public address. Anything that is not an IP address
 * at all is refused too, so a caller can never pass a name here by mistake.
 */
export function forbiddenAddressReason(ip: string): string | undefined {
  const bare = ip.replace(/^\[(.*)\]$/, '$1')
  const family = net.isIP(bare.replace(/%.*$/, ''))
  if (family === 4) return V4.find((r) => inRange(v4Bytes(bare), r))?.[2]
  if (family !== 6) return 'not an IP address'
  const bytes = v6Bytes(bare)
  const v4 = embeddedV4(bytes)
  if (v4) return V4.find((r) => inRange(v4, r))?.[2]
  return V6.find((r) => inRange(bytes, r))?.[2]
}
