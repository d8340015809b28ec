/**
 * One delivery attempt over `node:https` (Node's global fetch ignores custom agents, so it cannot
 * enforce where the socket goes). The resolver is wrapped so every address DNS returns is checked
 * before connecting, and the address the TCP socket actually connected to is checked again before
 * TLS starts (GuardedAgent): not a byte, not even a ClientHello, reaches a refused address, and
 * there is no DNS-rebinding window. Redirects are never followed (a 3xx is a
 * failure); any 2xx is success; 10 s per attempt (spec: Job webhooks).
 */
import https from 'node:https';
import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { WEBHOOK_ATTEMPT_TIMEOUT_MS } from '@vitals/protocol';
import { addressAllowed, hostOf, normalizeWebhookUrl, type AllowList } from './ssrf.js';

export interface DeliveryOptions {
  /** Resolver to use instead of the system's (tests inject a rebinding one). */
  lookup?: LookupFunction;
  timeoutMs?: number;
}

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  responseMs: number;
  remoteAddress: string | null;
}

const REFUSED = 'refused: target resolves to a non-public address';

export function attemptDelivery(
  target: URL,
  body: Buffer,
  headers: Record<string, string>,
  allow: AllowList,
  opts: DeliveryOptions = {},
): Promise<AttemptResult> {
  const started = performance.now();
  const ms = (): number => Math.round(performance.now() - started);
  const refused = (error: string): Promise<AttemptResult> =>
    Promise.resolve({ ok: false, statusCode: null, error, responseMs: 0, remoteAddress: null });
  if (target.protocol !== 'https:') return refused('refused: not https');
  // The host every rule and the resolver see is the normalized one (ssrf.ts): `localhost.` is
  // `localhost`, and the allow list cannot be matched by a spelling of another host.
  const normalized = normalizeWebhookUrl(target.href);
  if (!normalized.ok) return refused(`refused: ${normalized.reason}`);
  target = normalized.url;
  const host = hostOf(target);
  const baseLookup = (opts.lookup ?? dns.lookup) as LookupFunction;

  const guardedLookup: LookupFunction = (hostname, options, callback) => {
    baseLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = (
        Array.isArray(addresses) ? addresses : [{ address: addresses as unknown as string, family: 4 }]
      ) as dns.LookupAddress[];
      if (list.length === 0) return callback(new Error('no address'), '', 0);
      const bad = list.find((a) => !addressAllowed(allow, host, a.address));
      if (bad) return callback(Object.assign(new Error(REFUSED), { code: 'EREFUSED_PRIVATE' }), '', 0);
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };

  return new Promise((resolve) => {
    let settled = false;
    let remote: string | null = null;
    const done = (r: Omit<AttemptResult, 'responseMs' | 'remoteAddress'>): void => {
      if (settled) return;
      settled = true;
      resolve({ ...r, responseMs: ms(), remoteAddress: remote });
    };
    const agent = new GuardedAgent((address) => {
      remote = address;
      return addressAllowed(allow, host, address);
    });
    const req = https.request(
      {
        protocol: 'https:',
        hostname: host,
        port: target.port || 443,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(body.length),
          'user-agent': 'vitals-webhooks/1',
        },
        agent,
        lookup: guardedLookup,
        servername: net.isIP(host) ? undefined : host,
        timeout: opts.timeoutMs ?? WEBHOOK_ATTEMPT_TIMEOUT_MS,
      },
      (res) => {
        const code = res.statusCode ?? 0;
        res.resume();
        res.on('end', () => {
          if (code >= 200 && code < 300) done({ ok: true, statusCode: code, error: null });
          else if (code >= 300 && code < 400) done({ ok: false, statusCode: code, error: 'redirect not followed' });
          else done({ ok: false, statusCode: code, error: `HTTP ${code}` });
        });
        res.on('error', (e) => done({ ok: false, statusCode: code, error: e.message }));
      },
    );
    const hardStop = setTimeout(() => req.destroy(new Error('timeout')), opts.timeoutMs ?? WEBHOOK_ATTEMPT_TIMEOUT_MS);
    req.on('close', () => {
      clearTimeout(hardStop);
      agent.destroy();
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => done({ ok: false, statusCode: null, error: e.message }));
    req.end(body);
  });
}

/**
 * An agent that opens the TCP connection itself, checks the peer address (whatever resolved it:
 * literal IPs skip the resolver), and only then starts TLS on that socket.
 */
class GuardedAgent extends https.Agent {
  constructor(private readonly allowed: (address: string) => boolean) {
    super({ keepAlive: false, maxSockets: 1 });
  }

  override createConnection(options: any, callback?: (err: Error | null, stream: Duplex) => void): undefined {
    const oncreate = (err: Error | null, socket?: Duplex): void => callback?.(err, socket as Duplex);
    const raw = net.connect({ host: options.host, port: options.port, lookup: options.lookup, family: options.family });
    const fail = (err: Error): void => {
      raw.destroy();
      oncreate(err);
    };
    raw.once('error', fail);
    raw.setTimeout(options.timeout ?? WEBHOOK_ATTEMPT_TIMEOUT_MS, () => fail(new Error('timeout')));
    raw.once('connect', () => {
      raw.removeListener('error', fail);
      raw.setTimeout(0);
      const address = raw.remoteAddress;
      if (!address || !this.allowed(address))
        return fail(Object.assign(new Error(REFUSED), { code: 'EREFUSED_PRIVATE' }));
      oncreate(null, tls.connect({ ...options, socket: raw }));
    });
    return undefined;
  }
}
