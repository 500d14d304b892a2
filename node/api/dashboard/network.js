// Everyone's view: this node, its peers, DHT and gossip health (from /v1/status, /v1/peers and /metrics).
import { stepChart } from './chart.js'
import { h, panel, cards, table, idCell, clock, duration } from './dom.js'

const sum = (metrics, name, where = () => true) => metrics.filter((m) => m.name === name && where(m.labels)).reduce((n, m) => n + m.value, 0)

/** Counters of one metric by one label, biggest first: [[label value, count], …]. */
function byLabel (metrics, name, label) {
  const out = {}
  for (const m of metrics) if (m.name === name && m.value > 0) out[m.labels[label] ?? '?'] = (out[m.labels[label] ?? '?'] ?? 0) + m.value
  return Object.entries(out).sort((a, b) => b[1] - a[1])
}

export function renderNetwork (data, now, history) {
  const { status, peers, metrics } = data
  const provided = status.capabilityKeys.filter((k) => k.provided).length
  const lookups = sum(metrics, 'gpumesh_dht_find_providers_seconds_count')
  const lookupSec = sum(metrics, 'gpumesh_dht_find_providers_seconds_sum')
  const rejected = byLabel(metrics, 'gpumesh_messages_rejected_total', 'reason')
  const dropped = byLabel(metrics, 'gpumesh_gossip_rpc_dropped_total', 'reason')
  return [
    panel('This node', { class: 'wide', id: 'node-info' },
      cards([
        ['role', status.role, `gpumesh ${status.version}`],
        ['up', duration(now - status.startedAt), `since ${clock(status.startedAt)}`],
        ['connections', String(status.connections)],
        ['reachability', status.nat?.reachability ?? '–', status.nat?.reason],
        ['bootstrap', status.bootstrap.state, `${status.bootstrap.connected} of ${status.bootstrap.configured} connected`]
      ]),
      table(['LISTENING ON'], status.addresses.map((a) => [a]), 'no addresses')),
    panel('DHT', { id: 'dht' },
      cards([
        ['mode', status.dht.mode],
        ['routing table', String(status.dht.routingTable), 'peers'],
        ['capability keys', `${provided}/${status.capabilityKeys.length}`, 'on the DHT'],
        ['provides', String(sum(metrics, 'gpumesh_dht_provides_total', (l) => l.result === 'ok')), `${sum(metrics, 'gpumesh_dht_provides_total', (l) => l.result !== 'ok')} failed`],
        ['lookups', String(lookups), lookups > 0 ? `${(lookupSec / lookups * 1000).toFixed(0)} ms mean` : undefined]
      ])),
    panel('Gossip', { id: 'gossip' },
      cards([
        ['messages refused', String(rejected.reduce((n, [, v]) => n + v, 0)), 'invalid, stale, replayed…'],
        ['RPCs dropped', String(dropped.reduce((n, [, v]) => n + v, 0)), 'before validation']
      ]),
      table(['REFUSED FOR', 'COUNT'], rejected.slice(0, 8).map(([k, v]) => [k, String(v)]), 'nothing refused')),
    panel('Connections over time', { class: 'wide', id: 'connections' }, stepChart(history, { title: 'open connections (sampled while this page is open)', wide: true })),
    panel('Peers', { class: 'wide', id: 'peers' },
      table(['PEER', 'DIRECTION', 'ADDRESS', 'OPEN FOR'], peers.map((p) => [idCell(p.peerId), p.direction, p.addresses[0] ?? '', p.openedAt !== undefined ? duration(now - p.openedAt) : '–']), 'no connected peers'))
  ]
}
