/**
 * The soak's world (scripts/soak/index.ts): a PostgreSQL database of its own, a 64 MB tmpfs data dir,
 * and the server as a child process on a fixed loopback port, which the soak SIGKILLs and restarts.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export const PG_ADMIN_URL = process.env.SOAK_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REPO = path.resolve(import.meta.dirname, '../..');

export interface SoakDb {
  url: string;
  query<T = any>(text: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

/** A fresh database `vitals_soak_<pid>`, dropped at the end. */
export async function createDatabase(): Promise<SoakDb> {
  const name = `vitals_soak_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`drop database if exists ${name}`);
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);
  return {
    url,
    async query(text, params) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        return (await c.query(text, params as unknown[])).rows;
      } finally {
        await c.end();
      }
    },
    async drop() {
      const a = new pg.Client({ connectionString: PG_ADMIN_URL });
      await a.connect();
      await a.query(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}

/** Restarts the local PostgreSQL cluster (a second or two); returns how long it took. */
export function restartPostgres(): number {
  const t0 = Date.now();
  const version = fs.readdirSync('/etc/postgresql')[0];
  execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'restart'], { stdio: 'ignore' });
  return Date.now() - t0;
}

/** A 64 MB tmpfs (root only); a plain temp dir when it cannot be mounted (then no disk-full fault). */
export function createDataDir(): { dir: string; tmpfs: boolean; cleanup(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-soak-'));
  let tmpfs = false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', dir], { stdio: 'ignore' });
    tmpfs = true;
  } catch {
    // not root: the disk-full fault is skipped and reported as such
  }
  return {
    dir,
    tmpfs,
    cleanup() {
      if (tmpfs) execFileSync('umount', [dir], { stdio: 'ignore' });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Fills the data dir's disk to the last byte; returns the release. */
export function fillDisk(dir: string): () => void {
  const file = path.join(dir, 'soak-filler.bin');
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.alloc(1 << 20, 1);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch {
    // ENOSPC: full (the last partial chunk fills the rest)
    try {
      for (;;) fs.writeSync(fd, Buffer.alloc(4096, 1));
    } catch {
      // full to the page
    }
  } finally {
    fs.closeSync(fd);
  }
  return () => fs.rmSync(file, { force: true });
}

export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** The server as a child process; `start` waits for "listening", `kill` is SIGKILL. */
export class ServerProcess {
  child?: ChildProcess;
  starts = 0;
  key?: { keyId: string; secret: string };
  readonly log: string[] = [];

  constructor(
    readonly port: number,
    readonly dataDir: string,
    readonly databaseUrl: string,
    /** `serve` (HTTP, sockets and a worker), or `worker` (a second process claiming jobs, scale-out). */
    readonly command: 'serve' | 'worker' = 'serve',
  ) {}

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const args = ['--conditions=source', '--import', 'tsx', 'packages/server/src/bin.ts', this.command];
    if (this.command === 'serve') args.push('--host', '127.0.0.1', '--port', String(this.port));
    args.push('--data-dir', this.dataDir);
    const child = spawn(process.execPath, args, {
      cwd: REPO,
      env: {
        ...process.env,
        VITALS_DATABASE_URL: this.databaseUrl,
        // Each job waits 3 s before estimating, so a SIGKILL finds jobs mid-run; sweeps every 5 s.
        VITALS_TEST_JOB_DELAY_MS: '3000',
        VITALS_SWEEP_INTERVAL_SEC: '5',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.starts++;
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start: ${out.slice(-500)}`)), 60_000);
      const onData = (d: Buffer): void => {
        out += d.toString();
        const id = /VITALS_KEY_ID=(\S+)/.exec(out);
        const secret = /VITALS_KEY_SECRET=(\S+)/.exec(out);
        if (id && secret) this.key = { keyId: id[1], secret: secret[1] };
        if (out.includes('listening on') || /worker \S+ started/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', (d: Buffer) => {
        out += d.toString();
        this.log.push(...d.toString().split('\n').filter(Boolean).slice(-20));
        if (this.log.length > 200) this.log.splice(0, this.log.length - 200);
      });
      child.once('exit', (code) => reject(new Error(`server exited (${code}) before listening: ${out.slice(-500)}`)));
    });
  }

  /** SIGKILL: no shutdown hook runs (as a crash or an OOM kill). */
  async kill(): Promise<void> {
    const c = this.child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    const c = this.child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    await this.kill();
  }

  /** Resident set size of the server process, MB (Linux /proc). */
  rssMb(): number {
    const pid = this.child?.pid;
    if (!pid) return NaN;
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    return Math.round(kb / 1024);
  }
}
