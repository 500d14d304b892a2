/**
 * A catalog of 20 nodes with varied declared GPUs and regions (memory totals as nvidia-smi reports
 * them), shared by the discovery integration test and bench:dht. The last node sells nothing.
 */
import type { NodeSpec } from './network.js'

export const H100 = 'NVIDIA H100 80GB HBM3:81559'
export const A100_40 = 'NVIDIA A100-SXM4-40GB:40960'
export const A100_80 = 'NVIDIA A100-SXM4-80GB:81920'
export const L40S = 'NVIDIA L40S:46068'
export const RTX4090 = 'NVIDIA GeForce RTX 4090:24564'
export const T4 = 'Tesla T4:15360'

export const CATALOG: NodeSpec[] = [
  { region: 'eu-west', gpus: [`${H100}x8`] },
  { region: 'eu-west', gpus: [`${A100_40}x4`] },
  { region: 'eu-north', gpus: [`${L40S}x2`] },
  { region: 'eu-north', gpus: [`${RTX4090}x4`] },
  { region: 'eu', gpus: [T4] },
  { region: 'us-east', gpus: [`${H100}x4`] },
  { region: 'us-east', gpus: [`${A100_80}x8`] },
  { region: 'us-west', gpus: [`${RTX4090}x2`] },
  { region: 'us-west', gpus: [`${T4}x4`] },
  { region: 'us-central', gpus: [L40S] },
  { region: 'ap-south', gpus: [`${A100_40}x2`] },
  { region: 'ap-south', gpus: [RTX4090] },
  { region: 'ap-east', gpus: [`${H100}x2`] },
  { region: 'ap-east', gpus: [T4, RTX4090] },
  { region: 'sa-east', gpus: [`${L40S}x4`] },
  { region: 'sa-east', gpus: [A100_80] },
  { region: 'af-south', gpus: [T4] },
  { region: 'me-central', gpus: [`${H100}x8`] },
  { region: 'eu-west', gpus: [RTX4090, L40S] },
  { region: 'us-east', sell: false, gpus: [H100] } // not selling: never listed
]
