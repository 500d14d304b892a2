import assert from 'node:assert/strict'
import fc from 'fast-check'
import { ipv6Groups, subnetKey, subnetKeys } from '../../../../protocol/trust/subnet.js'

describe('protocol/trust/subnet', () => {
  it('keys IPv4 by /16: 10.1.255.255 and 10.2.0.0 are different networks, 10.1.0.0 and 10.1.255.255 one', () => {
    assert.equal(subnetKey('/ip4/10.1.255.255/tcp/4001'), 'ip4/10.1')
    assert.equal(subnetKey('/ip4/10.2.0.0/tcp/4001'), 'ip4/10.2')
    assert.equal(subnetKey('/ip4/10.1.0.0/udp/4001/quic-v1'), 'ip4/10.1')
    assert.equal(subnetKey('/ip4/0.0.0.0/tcp/1'), 'ip4/0.0')
    assert.equal(subnetKey('/ip4/255.255.255.255/tcp/1'), 'ip4/255.255')
  })

  it('keys IPv6 by /48, whatever the spelling, and reads IPv4-mapped addresses as IPv4', () => {
    assert.equal(subnetKey('/ip6/2001:db8:1:ffff::1/tcp/4001'), 'ip6/2001:db8:1')
    assert.equal(subnetKey('/ip6/2001:0DB8:0001:0000:0000:0000:0000:0001/tcp/4001'), 'ip6/2001:db8:1')
    assert.equal(subnetKey('/ip6/2001:db8:2::/tcp/4001'), 'ip6/2001:db8:2')
    assert.equal(subnetKey('/ip6/::1/tcp/4001'), 'ip6/0:0:0')
    assert.equal(subnetKey('/ip6/::ffff:10.1.2.3/tcp/4001'), 'ip4/10.1')
    assert.equal(subnetKey('/ip6zone/eth0/ip6/fe80::1/tcp/4001'), 'ip6/fe80:0:0')
  })

  it('gives no key for relayed, DNS, memory and malformed addresses', () => {
    for (const addr of [
      '/ip4/203.0.113.7/tcp/4001/p2p/12D3KooWRawPbxPtP1eZaJpumGnyWX2DcUyd3RQnydr3eAto4Az7/p2p-circuit',
      '/dns4/example.com/tcp/4001', '/memory/a', '', 'ip4/10.1.2.3', '/ip4/10.1.2/tcp/1', '/ip4/10.1.2.256/tcp/1',
      '/ip4/10.01.2.3/tcp/1', '/ip4/', '/ip6/1:2:3:4:5:6:7/tcp/1', '/ip6/1::2::3/tcp/1', '/ip6/1:2:3:4:5:6:7:8:9/tcp/1',
      '/ip6/1::2:3:4:5:6:7:8/tcp/1', '/ip6/12345::/tcp/1', '/ip6/::ffff:1.2.3/tcp/1'
    ]) assert.equal(subnetKey(addr), undefined, addr)
  })

  it('lists a provider\'s distinct keys sorted', () => {
    assert.deepEqual(subnetKeys(['/ip4/10.2.0.1/tcp/1', '/ip4/10.1.9.9/tcp/1', '/ip4/10.1.0.1/udp/1/quic-v1', '/dns4/x/tcp/1']), ['ip4/10.1', 'ip4/10.2'])
    assert.deepEqual(subnetKeys([]), [])
  })

  it('property: IPv4 keys are the first two octets; IPv6 groups round-trip through the full spelling', () => {
    const octet = fc.integer({ min: 0, max: 255 })
    fc.assert(fc.property(octet, octet, octet, octet, (a, b, c, d) => {
      assert.equal(subnetKey(`/ip4/${a}.${b}.${c}.${d}/tcp/1`), `ip4/${a}.${b}`)
    }))
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }), (groups) => {
      assert.deepEqual(ipv6Groups(groups.map((g) => g.toString(16)).join(':')), groups)
    }))
  })
})
