/**
 * The world of the console's end-to-end test: a real `vitals-server serve` child on loopback (a
 * child so NODE_EXTRA_CA_CERTS, read by Node only at start, trusts the receiver's self-signed
 * certificate, as in packages/server/test/webhook-https.test.ts), a real HTTPS webhook receiver,
 * the operator's `accounts create` command, and NCS1-signed calls made with a key the test created
 * through the console itself.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomHex, signRequest } from '@vitals/protocol';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** Screenshots land here: a gitignored folder, kept after the run for people to look at. */
export const artifacts = path.join(root, '.artifacts', 'console');

export interface Hit {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

export class World {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-console-e2e-'));
  readonly dataDir = path.join(this.dir, 'data');
  readonly certFile = path.join(this.dir, 'cert.pem');
  readonly hits: Hit[] = [];
  baseUrl = '';
  hookBase = '';
  private server?: ChildProcess;
  private receiver?: https.Server;

  env(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      VITALS_DATA_DIR: this.dataDir,
      VITALS_DATABASE_URL: '',
      NODE_EXTRA_CA_CERTS: this.certFile,
      VITALS_WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
      VITALS_WEBHOOK_RETRY_BASE_MS: '100',
      VITALS_WORKER_POLL_MS: '100',
      VITALS_CONSOLE_PAYMENTS: 'manual',
    };
  }

  /** A self-signed certificate for 127.0.0.1 and an HTTPS receiver answering 204. */
  async startReceiver(): Promise<void> {
    const key = path.join(this.dir, 'key.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'].concat([
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-keyout',
        key,
        '-out',
        this.certFile,
      ]),
      { stdio: 'ignore' },
    );
    this.receiver = https.createServer(
      { key: fs.readFileSync(key), cert: fs.readFileSync(this.certFile) },
      (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => {
          this.hits.push({
            path: req.url ?? '',
            headers: req.headers as Record<string, string>,
            body: Buffer.concat(chunks),
          });
          res.writeHead(204).end();
        });
      },
    );
    await new Promise<void>((r) => this.receiver!.listen(0, '127.0.0.1', r));
    this.hookBase = `https://127.0.0.1:${(this.receiver.address() as { port: number }).port}`;
  }

  /** `vitals-server <args>` as the operator runs it; `stdin` is written to its standard input. */
  async cli(args: string[], stdin = ''): Promise<any> {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--conditions=source', 'packages/server/src/bin.ts', ...args, '--data-dir', this.dataDir],
      { cwd: root, env: this.env(), stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.stdin.end(stdin);
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    if (code !== 0) throw new Error(`vitals-server ${args.join(' ')} exited ${code}: ${err}`);
    return JSON.parse(out.trim().split('\n').pop()!);
  }

  async startServer(): Promise<void> {
    const server = spawn(
      process.execPath,
      ['--import', 'tsx', '--conditions=source', 'packages/server/src/bin.ts', 'serve'].concat([
        '--host',
        '127.0.0.1',
        '--port',
        '0',
        '--data-dir',
        this.dataDir,
      ]),
      { cwd: root, env: this.env(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.server = server;
    this.baseUrl = await new Promise<string>((resolve, reject) => {
      let out = '';
      server.stdout!.on('data', (d) => {
        out += d;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      server.stderr!.on('data', (d) => (out += d));
      server.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
    });
  }

  /** An NCS1-signed call to /sdk/v1, exactly as a customer's backend makes it. */
  async signed(
    key: { keyId: string; secret: string },
    method: string,
    p: string,
    body?: unknown,
    opts: { timestamp?: number; secret?: string } = {},
  ): Promise<{ status: number; body: any }> {
    const bytes = body === undefined ? undefined : JSON.stringify(body);
    const headers = await signRequest({
      keyId: key.keyId,
      secret: opts.secret ?? key.secret,
      method,
      path: p,
      body: bytes,
      timestamp: opts.timestamp ?? Math.floor(Date.now() / 1000),
      nonce: randomHex(16),
    });
    const res = await fetch(`${this.baseUrl}${p}`, {
      method,
      headers: { ...headers, ...(bytes ? { 'content-type': 'application/json' } : {}) },
      body: bytes,
    });
    return { status: res.status, body: await res.json().catch(() => null) };
  }

  async close(): Promise<void> {
    const server = this.server;
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await new Promise((r) => server.once('exit', r));
    }
    this.receiver?.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Polls `fn` until it returns a value (real time: the server is another process). */
export async function waitFor<T>(fn: () => Promise<T | undefined> | T | undefined, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A plausible submitted measurement (on-device result) for one end user. */
export function submission(userRef: string, hr: number, level: 'good' | 'fair' | 'poor', extra: object = {}) {
  if (level === 'poor') {
    return {
      source: 'web',
      durationSec: 30,
      isComplete: false,
      userRef,
      quality: { level, score: 0.2, usable: false },
      ...extra,
    };
  }
  return {
    source: 'web',
    durationSec: 30,
    isComplete: true,
    userRef,
    quality: { level, score: level === 'good' ? 0.9 : 0.6, usable: true },
    cardiac: { heartRate: { value: hr, unit: 'bpm', confidence: 0.9 } },
    hrv: { sdnnMs: 48 + (hr % 7), rmssdMs: 38 + (hr % 5), pnn50Pct: 18 },
    respiratory: { breathingRate: { value: 14 + (hr % 3), unit: 'brpm', confidence: 0.8 } },
    stress: { index: 120, level: 'low', unit: 'index' },
    ...extra,
  };
}

/** A pulse-like PPG trace: `seconds` at `hz`, one beat per 60/bpm seconds, a slow baseline drift. */
export function ppgTrace(seconds: number, hz: number, bpm: number): { ppgSignal: number[]; rrIntervalsMs: number[] } {
  const n = Math.round(seconds * hz);
  const f = bpm / 60;
  const ppgSignal = Array.from({ length: n }, (_, i) => {
    const t = i / hz;
    const phase = (t * f) % 1;
    const beat = Math.exp(-((phase - 0.2) ** 2) / 0.006) + 0.35 * Math.exp(-((phase - 0.5) ** 2) / 0.01);
    return Number((beat + 0.15 * Math.sin(2 * Math.PI * 0.25 * t)).toFixed(4));
  });
  const rrIntervalsMs = Array.from({ length: Math.floor(seconds * f) - 1 }, (_, i) =>
    Math.round(60000 / bpm + 12 * Math.sin(i)),
  );
  return { ppgSignal, rrIntervalsMs };
}
