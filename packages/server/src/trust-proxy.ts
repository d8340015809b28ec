/**
 * `VITALS_TRUST_PROXY` (docs/operating.md, "Behind a reverse proxy"): which peers may name the
 * client in `X-Forwarded-For`. Behind a proxy every request arrives from the proxy's address, so
 * every per-address limit (refused signatures, console sign-in, model downloads) would be shared by
 * all clients; trusting any peer instead would let a client escape them with a forged header. The
 * value is handed to Fastify's `trustProxy`, so `req.ip` is the forwarded client only when the peer
 * (and each further hop) is trusted.
 *
 * - unset, '' or `0`: trust nothing; `req.ip` is the socket's peer (the default).
 * - a comma-separated list of addresses, CIDRs (`10.0.0.0/8`) or the names `loopback`,
 *   `linklocal`, `uniquelocal`: trust exactly those peers.
 *
 * A hop count is refused: it cannot tell the proxy from a client that reaches the port directly
 * and writes its own header, and Fastify 5.12 ignores one for that reason (trusts nothing), so
 * accepting it would silently do nothing.
 */
import ipaddr from 'ipaddr.js';
import { ConfigError } from './config-error.js';

/** false: trust none; else the trusted peers (a Fastify `trustProxy` form). */
export type TrustProxy = false | readonly string[];

const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

const refuse = (why: string, raw: string): never => {
  throw new ConfigError(
    `VITALS_TRUST_PROXY ${why}, got "${raw}" (0 trusts none; else the proxies' addresses or CIDRs, comma-separated)`,
  );
};

/** Dotted quads only for IPv4: ipaddr.js also reads `1.5` or `0x7f.1` (inet_aton forms). */
const isAddress = (s: string): boolean => ipaddr.IPv4.isValidFourPartDecimal(s) || ipaddr.IPv6.isValid(s);

function checkEntry(entry: string, raw: string): string {
  if (NAMED_RANGES.has(entry.toLowerCase())) return entry.toLowerCase();
  if (entry.includes('/')) {
    let prefix: number;
    try {
      if (!isAddress(entry.slice(0, entry.indexOf('/')))) throw new Error('not an address');
      [, prefix] = ipaddr.parseCIDR(entry);
    } catch {
      return refuse(`has "${entry}", which is not an address/prefix-length CIDR`, raw);
    }
    // A /0 trusts every peer: any client could then forge its address.
    if (prefix === 0) return refuse(`has "${entry}", which would trust every peer`, raw);
    return entry;
  }
  if (!isAddress(entry)) return refuse(`has "${entry}", which is not an IP address`, raw);
  return entry;
}

export function trustProxyFrom(raw: string | undefined): TrustProxy {
  const value = (raw ?? '').trim();
  if (value === '' || value === '0') return false;
  if (/^\d+$/.test(value))
    refuse('is a hop count, which a client reaching the port directly can forge: list the proxies instead', value);
  // `true` (Fastify: trust every peer) is refused on purpose: it lets any client pick its address.
  if (/^(true|yes|on|all|\*)$/i.test(value)) refuse('may not trust every peer', value);
  const entries = value.split(',').map((s) => s.trim());
  if (entries.some((e) => e === '')) refuse('has an empty entry', value);
  return Object.freeze(entries.map((e) => checkEntry(e, value)));
}
