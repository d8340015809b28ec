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
 * The one host form every rule sees (issue 19): WHATWG URL parsing already lowercases, applies
 * IDNA (to punycode) and reads numeric IPv4 forms (`0x7f.1`, `2130706433`) as dotted quads; on top
 * of that, trailing dots are dropped (`localhost.` is the same name as `localhost` to every
 * resolver) and the result is parsed again, so `127.1.` becomes `127.0.0.1` too. A host with an
 * empty label (`a..b`) is no DNS name: undefined.
 */
export function normalizeHost(hostname: string): string | undefined {
  let h = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (net.isIPv6(h)) return h;
  h = h.replace(/\.+$/, '');
  if (!h || h.split('.').some((label) => label === '')) return undefined;
  let reparsed: string;
  try {
    reparsed = new URL(`https://${h}/`).hostname;
  } catch {
    return undefined;
  }
  return reparsed === h || net.isIP(reparsed) ? reparsed : undefined;
}

/**
 * Parses a webhook URL into its normalized form: https, an authority written out (`https:///path`
 * and `https:path` would make `path` the host), no credentials, and the host as `normalizeHost`
 * gives it. Never throws.
 */
export function normalizeWebhookUrl(raw: string): UrlCheck {
  if (typeof raw !== 'string' || raw.length > 2048) return { ok: false, reason: 'webhookUrl is not a valid URL' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'webhookUrl is not a valid URL' };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'webhookUrl must use https' };
  // The URL parser drops tabs and newlines and trims C0 controls and spaces; the authority must then
  // be written out: "https://" followed by something that is not a path, query or fragment.
  let written = raw.replace(/[\t\n\r]/g, '');
  while (written.length > 0 && written.charCodeAt(0) <= 0x20) written = written.slice(1);
  if (!/^https:\/\/[^/\\?#]/i.test(written)) return { ok: false, reason: 'webhookUrl has no host' };
  if (url.username || url.password) return { ok: false, reason: 'webhookUrl must not carry credentials' };
  const host = normalizeHost(url.hostname);
  if (host === undefined) return { ok: false, reason: 'webhookUrl host is not a valid host name' };
  url.hostname = net.isIPv6(host) ? `[${host}]` : host;
  return { ok: true, url };
}

/** The host of a normalized URL, without IPv6 brackets. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * The static check at job creation, endpoint creation and again before every delivery
 * (CLARIFICATIONS 23): the normalized URL, and a host that is not a literal private or loopback
 * address nor a loopback name (unless allowed). Names are resolved only at delivery, where the
 * address connected to is checked (deliver.ts).
 */
export function checkWebhookUrl(raw: string, list: AllowList): UrlCheck {
  const n = normalizeWebhookUrl(raw);
  if (!n.ok) return n;
  const host = hostOf(n.url);
  if (net.isIP(host) && !addressAllowed(list, host, host))
    return { ok: false, reason: 'webhookUrl host is a private, loopback or otherwise non-public address' };
  if (host === 'localhost' || host.endsWith('.localhost')) {
    if (!allowedByList(list, host)) return { ok: false, reason: 'webhookUrl host is a loopback name' };
  }
  return n;
}
