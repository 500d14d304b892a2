/**
 * Which countries a region slug stands for, so the requester can estimate the RTT to a provider it has
 * not measured from the provider's `region` when its bid names no `country` (rtt-estimate.ts).
 *
 * Region slugs are free-form and hierarchical (protocol/README §2: `eu` ⊃ `eu-west` ⊃ `eu-west-2`);
 * this is the mapping gpumesh documents for the common ones, the same country groups the simulator
 * places nodes in (simulations/network/geo.ts reads this table):
 *
 *  - a listed region stands for its countries (`eu-west` → BE, ES, FR, GB, …);
 *  - a top-level area (`eu`, `af`, `ap`, `us`, …) stands for every country of every listed region
 *    inside it (`eu` → all of eu-west, eu-central, eu-north, eu-south, eu-east, and RIPE's `EU`);
 *  - a sub-region below a listed one stands for the nearest listed region above it (`eu-west-2` →
 *    `eu-west`, `us-east-1` → `us`);
 *  - anything else (`local`, `mars`) stands for no country: no estimate, the RTT stays unknown.
 */
import { regionAncestry, regionWithin } from '../constants.js'

/** The listed regions and their countries (ISO 3166-1 alpha-2; `EU` is RIPE's "Europe" code). */
export const REGION_COUNTRIES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  'eu-west': ['AD', 'BE', 'ES', 'FR', 'GB', 'IE', 'IM', 'LU', 'NL', 'PT'],
  'eu-central': ['AT', 'CH', 'CZ', 'DE', 'HU', 'LI', 'PL', 'SI', 'SK'],
  'eu-north': ['DK', 'EE', 'FI', 'GL', 'IS', 'LT', 'LV', 'NO', 'SE'],
  'eu-south': ['AL', 'BA', 'CY', 'GR', 'HR', 'IT', 'ME', 'MK', 'MT', 'RS', 'SM'],
  'eu-east': ['AM', 'AZ', 'BG', 'BY', 'GE', 'MD', 'RO', 'RU', 'TR', 'UA'],
  eu: ['EU'],
  us: ['US'],
  ca: ['CA'],
  mesoamerica: ['BZ', 'CR', 'GT', 'HN', 'MX', 'PA', 'SV'],
  caribbean: ['AG', 'AI', 'BB', 'BS', 'CU', 'DO', 'GP', 'JM', 'KN', 'KY', 'PR', 'SX', 'TT', 'VG'],
  sa: ['AR', 'BO', 'BR', 'CL', 'CO', 'EC', 'PE', 'PY', 'UY', 'VE'],
  'af-north': ['DZ', 'EG', 'LY', 'MA', 'TN'],
  'af-west': ['BF', 'BJ', 'CI', 'GH', 'NG', 'SL', 'SN', 'TG'],
  'af-central': ['CD', 'CM', 'GQ', 'TD'],
  'af-east': ['DJ', 'KE', 'MG', 'MU', 'RE', 'RW', 'SC', 'SS', 'TZ', 'UG'],
  'af-south': ['AO', 'MW', 'MZ', 'NA', 'SZ', 'ZA', 'ZM', 'ZW'],
  me: ['AE', 'BH', 'IL', 'IQ', 'IR', 'JO', 'KW', 'LB', 'OM', 'PS', 'QA', 'SA', 'SY', 'YE'],
  'ap-central': ['KG', 'KZ', 'TJ', 'UZ'],
  'ap-south': ['AF', 'BD', 'IN', 'LK', 'MV', 'NP', 'PK'],
  'ap-east': ['CN', 'HK', 'JP', 'KR', 'MN', 'TW'],
  'ap-southeast': ['BN', 'ID', 'KH', 'LA', 'MM', 'MY', 'PH', 'SG', 'TH', 'TL', 'VN'],
  oc: ['AU', 'FJ', 'FM', 'GU', 'MP', 'NC', 'NZ', 'PF', 'PG', 'PW', 'VU']
})

const LISTED = Object.keys(REGION_COUNTRIES).sort()

/** The countries `region` stands for (see the file comment), sorted; empty when none. */
export function countriesOfRegion (region: string): readonly string[] {
  const inside = LISTED.filter((r) => regionWithin(r, region))
  if (inside.length > 0) return [...new Set(inside.flatMap((r) => REGION_COUNTRIES[r] ?? []))].sort()
  const above = regionAncestry(region).find((r) => REGION_COUNTRIES[r] !== undefined)
  return above === undefined ? [] : [...(REGION_COUNTRIES[above] ?? [])].sort()
}
