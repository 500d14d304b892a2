/**
 * The network a provider sits in, for replication's independence rule (protocol/README.md
 * "Verification and fraud proofs"): the IPv4 /16 or the IPv6 /48 of each address, read from
 * multiaddr strings (`/ip4/10.1.2.3/tcp/4001`). Relayed addresses (`…/p2p-circuit…`) name the relay's
 * network, not the provider's, and DNS names are not resolved here (pure code): both give no key.
 */

/** Octets of a dotted-quad IPv4 address, or undefined. */
function ipv4Octets (text: string): number[] | undefined {
  const parts = text.split('.')
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9][0-9]{0,2})$/.test(p))) return undefined
  const octets = parts.map(Number)
  return octets.every((o) => o <= 255) ? octets : undefined
}

const HEX_GROUP = /^[0-9a-f]{1,4}$/

function hexGroups (text: string): number[] | undefined {
  if (text === '') return []
  const parts = text.split(':')
  return parts.every((p) => HEX_GROUP.test(p)) ? parts.map((p) => parseInt(p, 16)) : undefined
}

/** The eight 16-bit groups of an IPv6 address (with `::` and a dotted IPv4 tail), or undefined. */
export function ipv6Groups (address: string): number[] | undefined {
  let text = address.toLowerCase()
  let tail: number[] = []
  const lastColon = text.lastIndexOf(':')
  if (lastColon >= 0 && text.slice(lastColon + 1).includes('.')) {
    const octets = ipv4Octets(text.slice(lastColon + 1))
    if (octets === undefined) return undefined
    tail = [(octets[0] as number) << 8 | (octets[1] as number), (octets[2] as number) << 8 | (octets[3] as number)]
    text = text.slice(0, lastColon + 1) + '0:0'
  }
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const head = hexGroups(halves[0] as string)
  const rest = halves.length === 2 ? hexGroups(halves[1] as string) : []
  if (head === undefined || rest === undefined) return undefined
  const missing = 8 - head.length - rest.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined
  const groups = [...head, ...new Array<number>(missing).fill(0), ...rest]
  if (tail.length === 2) groups.splice(6, 2, ...tail)
  return groups
}

function ipv4Key (octets: readonly number[]): string {
  return `ip4/${octets[0] as number}.${octets[1] as number}`
}

/**
 * The network key of one multiaddr: `ip4/<a>.<b>` (its /16) or `ip6/<g0>:<g1>:<g2>` (its /48, groups in
 * lower-case hex without leading zeros; an IPv4-mapped `::ffff:a.b.c.d` counts as IPv4). Undefined for
 * a relayed address, one without an IP component, or a malformed one.
 */
export function subnetKey (multiaddr: string): string | undefined {
  const parts = multiaddr.split('/')
  if (parts[0] !== '' || parts.includes('p2p-circuit')) return undefined
  for (let i = 1; i + 1 < parts.length; i++) {
    const value = parts[i + 1] as string
    if (parts[i] === 'ip4') {
      const octets = ipv4Octets(value)
      return octets === undefined ? undefined : ipv4Key(octets)
    }
    if (parts[i] === 'ip6') {
      const g = ipv6Groups(value)
      if (g === undefined) return undefined
      if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return ipv4Key([(g[6] as number) >> 8, (g[6] as number) & 0xff])
      return `ip6/${g.slice(0, 3).map((x) => x.toString(16)).join(':')}`
    }
  }
  return undefined
}

/** The distinct network keys of a provider's addresses, sorted. */
export function subnetKeys (multiaddrs: readonly string[]): string[] {
  const keys = new Set<string>()
  for (const addr of multiaddrs) {
    const key = subnetKey(addr)
    if (key !== undefined) keys.add(key)
  }
  return [...keys].sort()
}
