/**
 * Webhook rules in-process (spec: Job webhooks; CLARIFICATIONS 23): which targets are refused and
 * when, the journal (every attempt, backoff, 3 attempts), endpoints (5 per organization, secret
 * shown once, only its hash stored), redelivery, and deliveries surviving a restart. Real HTTPS
 * deliveries with a trusted self-signed receiver are in webhook-https.test.ts.
 */
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sha256Hex } from '@vitals/protocol';
import { createBatchWorld, createJob, phantomFramesFile, type BatchWorld, ManualClock } from './batch-world.js';
import { attemptDelivery } from '../src/webhooks/deliver.js';
import { checkWebhookUrl, isPublicAddress, parseAllowList } from '../src/webhooks/ssrf.js';
import { createEndpoint, EndpointError, listEndpoints, rotateEndpoint } from '../src/webhooks/endpoints.js';
import { deliverDue, redeliver } from '../src/webhooks/dispatcher.js';
import { attemptsOf, getDelivery, listDeliveries } from '../src/webhooks/journal.js';
import { runJob } from '../src/batch/index.js';
import { waitFor } from '../src/testing.js';

const none = parseAllowList([]);

describe('address rules', () => {
  test.each([
    ['93.184.216.34', true],
    ['8.8.8.8', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['10.0.0.1', false],
    ['172.16.5.4', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['255.255.255.255', false],
    ['224.0.0.1', false],
    ['::1', false],
    ['fc00::1', false],
    ['fe80::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['64:ff9b::a00:1', false],
  ])('%s public: %s', (addr, pub) => expect(isPublicAddress(addr)).toBe(pub));

  test.each([
    ['https://hooks.example.com/x', true],
    ['https://93.184.216.34/x', true],
    ['http://hooks.example.com/x', false],
    ['ftp://hooks.example.com/x', false],
    ['https://user:pw@hooks.example.com/x', false],
    ['https://127.0.0.1/x', false],
    ['https://[::1]/x', false],
    ['https://10.0.0.1/x', false],
    ['https://localhost/x', false],
    ['https://app.localhost/x', false],
    // Issue 19: every spelling of a refused host is refused (trailing dots, case, IDNA, numeric
    // IPv4 forms), and a URL without a written host is not read as one whose host is its path.
    ['https://localhost./', false],
    ['https://LOCALHOST./', false],
    ['https://localhost../', false],
    ['https://foo.localhost./', false],
    ['https://169.254.169.254../', false],
    ['https://127.1./x', false],
    ['https://0x7f.1/x', false],
    ['https://2130706433/x', false],
    ['https://0177.0.0.1/x', false],
    ['https://[::ffff:127.0.0.1]/x', false],
    ['https://[::ffff:a9fe:a9fe]/x', false],
    ['https://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/x', false],
    ['https:///path', false],
    ['https:path', false],
    ['https:\\\\hooks.example.com/x', false],
    ['https://a..b/x', false],
    ['https://./x', false],
    ['https://hooks.example.com./x', true],
    ['https://Hooks.Example.COM/x', true],
  ])('creation check %s → %s', (url, ok) => expect(checkWebhookUrl(url, none).ok).toBe(ok));

  test('the URL kept is the normalized one: lowercase, no trailing dot, punycode', () => {
    const r = checkWebhookUrl('https://B\u00fccher.Example../hook?a=1', none);
    expect(r.ok && r.url.href).toBe('https://xn--bcher-kva.example/hook?a=1');
  });

  test('the allow list matches the normalized host only', () => {
    const allow = parseAllowList(['localhost']);
    expect(checkWebhookUrl('https://LOCALHOST./x', allow).ok).toBe(true);
    expect(checkWebhookUrl('https://other.localhost./x', allow).ok).toBe(false);
  });

  test('the allow list exempts hosts and CIDRs from the address rule, never from https', () => {
    const allow = parseAllowList(['127.0.0.1', '10.0.0.0/8', 'localhost', '::1']);
    expect(checkWebhookUrl('https://127.0.0.1:8443/x', allow).ok).toBe(true);
    expect(checkWebhookUrl('https://10.20.30.40/x', allow).ok).toBe(true);
    expect(checkWebhookUrl('https://localhost/x', allow).ok).toBe(true);
    expect(checkWebhookUrl('https://[::1]/x', allow).ok).toBe(true);
    expect(checkWebhookUrl('https://192.168.0.1/x', allow).ok).toBe(false);
    expect(checkWebhookUrl('http://127.0.0.1/x', allow).ok).toBe(false);
  });
});

describe('delivery refusals (checked at the attempt, on what the socket connects to)', () => {
  const body = Buffer.from('{}');
  const lookupTo = (addresses: string[]): LookupFunction =>
    ((_h: string, _o: unknown, cb: (e: Error | null, a: Array<{ address: string; family: number }>) => void) =>
      cb(
        null,
        addresses.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 })),
      )) as unknown as LookupFunction;

  test('http is refused without connecting', async () => {
    const r = await attemptDelivery(new URL('http://hooks.example.com/x'), body, {}, none);
    expect(r).toMatchObject({ ok: false, error: 'refused: not https', remoteAddress: null });
  });

  test('a name resolving to a private address is refused before connecting', async () => {
    const r = await attemptDelivery(new URL('https://hooks.example.com/x'), body, {}, none, {
      lookup: lookupTo(['10.0.0.7']),
    });
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/non-public/);
    expect(r.remoteAddress).toBeNull();
  });

  test('one private address among public ones is enough to refuse', async () => {
    const r = await attemptDelivery(new URL('https://hooks.example.com/x'), body, {}, none, {
      lookup: lookupTo(['93.184.216.34', '127.0.0.1']),
    });
    expect(r.error).toMatch(/non-public/);
  });

  test('a literal loopback address: the connected socket is checked and closed before a byte is sent', async () => {
    let received = 0;
    let connections = 0;
    const server = net.createServer((s) => {
      connections++;
      s.on('data', (d) => (received += d.length));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const r = await attemptDelivery(new URL(`https://127.0.0.1:${port}/x`), body, {}, none);
      expect(r.ok).toBe(false);
      expect(r.error).toMatch(/non-public/);
      expect(r.remoteAddress).toBe('127.0.0.1');
      await new Promise((res) => setTimeout(res, 50));
      expect(connections).toBe(1);
      expect(received).toBe(0); // not even a TLS ClientHello
    } finally {
      server.close();
    }
  });

  test('a trailing-dot loopback name is resolved as the name it is and refused (system resolver)', async () => {
    const r = await attemptDelivery(new URL('https://localhost./x'), body, {}, none, { timeoutMs: 2000 });
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/non-public|loopback/);
    expect(r.remoteAddress).toBeNull();
  });

  test.each([['::ffff:127.0.0.1'], ['::ffff:169.254.169.254'], ['::ffff:10.1.2.3'], ['fe80::1'], ['::1']])(
    'a resolver answering %s (IPv6, IPv4-mapped included) is refused before connecting',
    async (address) => {
      const r = await attemptDelivery(new URL('https://hooks.example.com/x'), body, {}, none, {
        lookup: lookupTo([address]),
      });
      expect(r.error).toMatch(/non-public/);
      expect(r.remoteAddress).toBeNull();
    },
  );

  test('an IPv4-mapped IPv6 literal: the connected socket is checked, nothing is sent', async () => {
    let received = 0;
    const server = net.createServer((s) => s.on('data', (d) => (received += d.length)));
    const listening = await new Promise<boolean>((r) => {
      server.once('error', () => r(false));
      server.listen(0, '::', () => r(true));
    });
    if (!listening) return; // no IPv6 stack here: nothing to connect to
    const port = (server.address() as net.AddressInfo).port;
    try {
      const r = await attemptDelivery(new URL(`https://[::ffff:127.0.0.1]:${port}/x`), body, {}, none);
      expect(r.error).toMatch(/non-public/);
      expect(r.remoteAddress).toBe('::ffff:127.0.0.1');
      await new Promise((res) => setTimeout(res, 50));
      expect(received).toBe(0);
    } finally {
      server.close();
    }
  });

  test('a rebinding resolver (public, then private): the second attempt is refused', async () => {
    let calls = 0;
    const rebinding = ((h: string, o: unknown, cb: never) =>
      lookupTo([calls++ === 0 ? '93.184.216.34' : '127.0.0.1'])(h, o as never, cb)) as unknown as LookupFunction;
    const url = new URL('https://rebind.example.com/x');
    const first = await attemptDelivery(url, body, {}, none, { lookup: rebinding, timeoutMs: 300 });
    expect(first.error).not.toMatch(/non-public/); // went for the public address (unreachable here)
    const second = await attemptDelivery(url, body, {}, none, { lookup: rebinding, timeoutMs: 300 });
    expect(second.error).toMatch(/non-public/);
    expect(calls).toBe(2);
  });
});

describe('journal', () => {
  let w: BatchWorld;
  beforeAll(async () => {
    w = await createBatchWorld({ batch: { embeddedWorker: false, webhookRetryBaseMs: 5000 } });
  });
  afterAll(async () => w.close());

  test('endpoints: at most 5 per organization, whsec_ secret shown once, only its SHA-256 stored', async () => {
    const org = (await w.newKey()).orgId;
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await createEndpoint(w.ctx, org, `https://hooks.example.com/${i}`));
    expect(created[0].secret).toMatch(/^whsec_[0-9a-f]{48}$/);
    await expect(createEndpoint(w.ctx, org, 'https://hooks.example.com/6')).rejects.toThrow(EndpointError);
    await expect(createEndpoint(w.ctx, org, 'http://hooks.example.com/')).rejects.toThrow(/https/);
    await expect(createEndpoint(w.ctx, 'org_nope', 'https://hooks.example.com/')).rejects.toThrow(/no organization/);
    for (const url of ['https://localhost./', 'https://169.254.169.254../', 'https:///path'])
      await expect(createEndpoint(w.ctx, org, url)).rejects.toThrow(EndpointError);
    const row = await w.ctx.db.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', created[0].id)
      .executeTakeFirstOrThrow();
    expect(row.secret_sha256).toBe(await sha256Hex(created[0].secret));
    expect(JSON.stringify(row)).not.toContain(created[0].secret);
    const rotated = await rotateEndpoint(w.ctx, created[0].id);
    expect(rotated.secret).not.toBe(created[0].secret);
    expect((await listEndpoints(w.ctx, org)).map((e) => e.id)).toEqual(created.map((c) => c.id));
  });

  test('every attempt journaled; exponential backoff; failed after 3; redelivery is a new delivery', async () => {
    const k = await w.newKey();
    const ep = await createEndpoint(w.ctx, k.orgId, 'https://hooks.invalid/vitals');
    const job = await createJob(
      w,
      phantomFramesFile({ durationSec: 20 }),
      { webhookUrl: 'https://jobs.invalid/hook' },
      k,
    );
    await runJob(w.ctx, w.rt, job.jobId, 't');
    const rows = await listDeliveries(w.ctx.db.db, { jobId: job.jobId, limit: 10 });
    expect(rows.map((r) => [r.target, r.event]).sort()).toEqual([
      ['endpoint', 'cloud.job.completed'],
      ['job', 'cloud.job.completed'],
    ]);
    const clock = w.clock as ManualClock;
    await deliverDue(w.ctx, w.rt);
    let d = (await getDelivery(w.ctx.db.db, rows[0].id))!;
    expect(d).toMatchObject({ status: 'pending', attempts: 1, next_attempt_at: clock.now() + 5000 });
    expect(d.last_error).toBeTruthy();
    clock.advance(4999);
    await deliverDue(w.ctx, w.rt);
    expect((await getDelivery(w.ctx.db.db, rows[0].id))!.attempts).toBe(1); // not due yet
    clock.advance(1);
    await deliverDue(w.ctx, w.rt);
    d = (await getDelivery(w.ctx.db.db, rows[0].id))!;
    expect(d).toMatchObject({ attempts: 2, next_attempt_at: clock.now() + 20_000 });
    clock.advance(20_000);
    await deliverDue(w.ctx, w.rt);
    d = (await getDelivery(w.ctx.db.db, rows[0].id))!;
    expect(d).toMatchObject({ status: 'failed', attempts: 3, next_attempt_at: null });
    const attempts = await attemptsOf(w.ctx.db.db, d.id);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(attempts.every((a) => !a.ok && a.error && a.response_ms !== null)).toBe(true);
    clock.advance(10 ** 7);
    await deliverDue(w.ctx, w.rt);
    expect((await attemptsOf(w.ctx.db.db, d.id)).length).toBe(3);

    const again = (await redeliver(w.ctx, d.id))!;
    expect(again).toMatch(/^whd_[0-9a-f]{24}$/);
    expect(await getDelivery(w.ctx.db.db, again)).toMatchObject({
      status: 'pending',
      attempts: 0,
      redelivery_of: d.id,
      event: d.event,
    });
    void ep;
  });

  test('deliveries survive a restart: the journal is the queue', async () => {
    const k = await w.newKey();
    await createEndpoint(w.ctx, k.orgId, 'https://hooks.invalid/restart');
    const job = await createJob(w, phantomFramesFile({ durationSec: 20 }), {}, k);
    await runJob(w.ctx, w.rt, job.jobId, 't');
    const [row] = await listDeliveries(w.ctx.db.db, { jobId: job.jobId, limit: 1 });
    expect(row.attempts).toBe(0);
    const { createContext } = await import('../src/deps.js');
    const { loadConfig } = await import('../src/config.js');
    const ctx2 = await createContext(loadConfig({ VITALS_DATA_DIR: w.dataDir }), {
      clock: w.clock,
      db: w.ctx.db,
      env: {},
      batch: { pollMs: 20 },
    });
    const worker = await ctx2.batch!.startWorker();
    try {
      await waitFor(async () => (await getDelivery(w.ctx.db.db, row.id))!.attempts > 0, {
        timeoutMs: 4000,
        what: 'the first attempt',
      }).catch(() => undefined);
      expect((await getDelivery(w.ctx.db.db, row.id))!.attempts).toBe(1);
    } finally {
      await worker.stop();
    }
  });
});
