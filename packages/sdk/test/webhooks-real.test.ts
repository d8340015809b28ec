/**
 * Webhook deliveries from the real service, verified with the SDK helpers: a `vitals-server serve`
 * process (it must trust a test CA at start, through NODE_EXTRA_CA_CERTS) POSTs a per-job webhook
 * (signed with the API key) and an organization delivery (signed with the `whsec_` secret) to an
 * https receiver on loopback. Skipped, visibly, where openssl or the server's webhooks are missing.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePhantom } from '@vitals/engine';
import { encodeFaceCrop } from '@vitals/protocol';
import { FramesWriter, VitalsClient, verifyJobWebhook, verifyOrgWebhook } from '@vitals/sdk';
import { waitFor } from '@vitals/server/testing';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SERVER_BIN = join(ROOT, 'packages/server/src/bin.ts');
const dir = mkdtempSync(join(tmpdir(), 'vitals-wh-'));
const dataDir = join(dir, 'data');

function admin(args: string[]): string {
  return execFileSync(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', SERVER_BIN, ...args, '--data-dir', dataDir],
    {
      cwd: ROOT,
      env: { ...process.env, VITALS_WEBHOOK_ALLOW_HOSTS: '127.0.0.1' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
}

function tryPrepare(): boolean {
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    admin(['migrate']);
    admin(['webhooks', 'list']);
    return true;
  } catch {
    return false;
  }
}

const ready = tryPrepare();
if (!ready) console.warn('webhooks-real.test.ts: skipped (no openssl, or the server has no webhooks command yet)');

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

describe.skipIf(!ready)('webhooks delivered by the real service', () => {
  let receiver: Server;
  let service: ChildProcess;
  let baseUrl = '';
  const received: Received[] = [];

  beforeAll(async () => {
    receiver = createServer(
      { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
      (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
          res.writeHead(204).end();
        });
      },
    );
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    service = spawn(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', SERVER_BIN, 'serve', '--port', '0', '--data-dir', dataDir],
      {
        cwd: ROOT,
        env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem'), VITALS_WEBHOOK_ALLOW_HOSTS: '127.0.0.1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    baseUrl = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 60_000);
      const onData = (d: Buffer) => {
        out += d;
        const m = /listening on (http:\/\/[^\s]+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      };
      service.stdout!.on('data', onData);
      service.stderr!.on('data', onData);
    });
  }, 90_000);

  afterAll(async () => {
    service?.kill('SIGTERM');
    await new Promise<void>((r) => receiver?.close(() => r()));
  });

  it(
    'a per-job webhook verifies with the API key, an organization delivery with its whsec_ secret',
    { timeout: 120_000 },
    async () => {
      const org = JSON.parse(
        admin(['orgs', 'create', '--name', 'webhook-test', '--token-balance', '100', '--json']),
      ) as { orgId: string };
      const key = JSON.parse(admin(['keys', 'create', '--org', org.orgId, '--json'])) as {
        keyId: string;
        secret: string;
        orgId: string;
      };
      const port = (receiver.address() as AddressInfo).port;
      const endpoint = JSON.parse(
        admin([
          'webhooks',
          'create',
          '--org',
          key.orgId,
          '--url',
          `https://127.0.0.1:${port}/org-hook?src=vitals`,
          '--json',
        ]),
      ) as {
        id: string;
        secret: string;
      };
      expect(endpoint.secret).toMatch(/^whsec_/);

      const vitals = new VitalsClient({ ...key, baseUrl });
      const w = new FramesWriter();
      for (const p of generatePhantom({ heartRateBpm: 70, durationSec: 21, fps: 30, seed: 8 }).packets)
        if (p.type === 1) w.addPacket(encodeFaceCrop(p));
      const job = await vitals.jobs.submit({
        kind: 'frames',
        body: w.toBytes(),
        consent: true,
        webhookUrl: `https://127.0.0.1:${port}/job-hook`,
      });
      const settled = await vitals.jobs.wait(job.jobId, { intervalMs: 500 });
      expect(settled.status).toBe('completed');

      await waitFor(() => received.length >= 2, { timeoutMs: 60_000, intervalMs: 250 }).catch(() => undefined);
      const jobHook = received.find((r) => r.path === '/job-hook');
      const orgHook = received.find((r) => r.path.startsWith('/org-hook'));
      expect(jobHook, 'per-job delivery').toBeDefined();
      expect(orgHook, 'organization delivery').toBeDefined();

      const env = await verifyJobWebhook({
        rawBody: jobHook!.body,
        headers: jobHook!.headers,
        path: '/job-hook',
        keyId: key.keyId,
        secret: key.secret,
      });
      expect(env.data).toMatchObject({ jobId: job.jobId, status: 'completed' });
      await expect(
        verifyJobWebhook({
          rawBody: jobHook!.body,
          headers: jobHook!.headers,
          path: '/job-hook',
          keyId: key.keyId,
          secret: key.secret + 'x',
        }),
      ).rejects.toMatchObject({ code: 'invalid_signature' });

      const delivery = await verifyOrgWebhook({
        rawBody: orgHook!.body,
        headers: orgHook!.headers,
        path: orgHook!.path,
        secret: endpoint.secret,
        webhookId: endpoint.id,
      });
      expect(delivery).toMatchObject({ event: 'cloud.job.completed', data: { jobId: job.jobId, status: 'completed' } });
      expect(delivery.id).toMatch(/^whd_/);
    },
  );
});
