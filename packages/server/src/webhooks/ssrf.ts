/**
 * Where webhooks may go (spec: Job webhooks, "https on a publicly routable host; re-checked at every
 * delivery"; CLARIFICATIONS 23). An address is public when ipaddr.js classifies it `unicast` (not
 * private, loopback, link-local, carrier-grade NAT, unique-local, multicast, reserved,
 * documentation, or an IPv6 form that embeds IPv4). VITALS_WEBHOOK_ALLOW_HOSTS (host names or CIDRs)
 * is the only exemption, and it exempts from this rule only, never from https.
 */
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export interface AllowList {
  hosts: Set<string>;
  cidrs: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
}

export function parseAllowList(entries: readonly string[]): AllowList {
  const list: AllowList = { hosts: new Set(), cidrs: [] };
  for (const raw of entries) {
    const e = raw
      .trim()
      .toLowerCase()
      .replace(/^\[(.*)\]$/, '$1');
    if (!e) continue;
    if (ipaddr.isValidCIDR(e)) list.cidrs.push(normalizeCidr(ipaddr.parseCIDR(e)));
    else if (ipaddr.isValid(e)) {
      const a = ipaddr.process(e);
      list.cidrs.push([a, a.kind() === 'ipv4' ? 32 : 128]);
    } else list.hosts.add(e);
  }
  return list;
}

function normalizeCidr([a, bits]: [ipaddr.IPv4 | ipaddr.IPv6, number]): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  if (a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress())
    return [(a as ipaddr.IPv6).toIPv4Address(), Math.max(0, bits - 96)];
  return [a, bits];
}

export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

export function allowedByList(list: AllowList, host: string, address?: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (list.hosts.has(h)) return true;
  const ip = address ?? (ipaddr.isValid(h) ? h : undefined);
  if (!ip || !ipaddr.isValid(ip)) return false;
  const a = ipaddr.process(ip);
  return list.cidrs.some(([net, bits]) => net.kind() === a.kind() && a.match(net, bits));
}

/** The address rule for one resolved (or connected) address of `host`. */
export function addressAllowed(list: AllowList, host: string, address: string): boolean {
  return isPublicAddress(address) || allowedByList(list, host, address);
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * The static check at job creation and endpoint creation (CLARIFICATIONS 23): https, and a host
 * that is not a literal private or loopback address (unless allowed). Names are resolved only at
 * delivery.
 */
export function checkWebhookUrl(raw: string, list: AllowList): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'webhookUrl is not a valid URL' };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'webhookUrl must use https' };
  if (url.username || url.password) return { ok: false, reason: 'webhookUrl must not carry credentials' };
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (net.isIP(host) && !addressAllowed(list, host, host))
    return { ok: false, reason: 'webhookUrl host is a private, loopback or otherwise non-public address' };
  if (host === 'localhost' || host.endsWith('.localhost')) {
    if (!allowedByList(list, host)) return { ok: false, reason: 'webhookUrl host is a loopback name' };
  }
  return { ok: true, url };
}
