/**
 * `vitals measure` against the real server's batch tier (presign, PUT, job, polling), run in-process
 * through `runCli` (support/run.ts).
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '@vitals/server/testing';
import { credsEnv, runVitals } from './support/run.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

/** A real face recording from the shared evaluation data, when it is beside the repository. */
const FACE_VIDEO = new URL('../../../../shared/data/ubfc2/subject10/vid.mp4', import.meta.url).pathname;

describe('vitals measure (batch tier)', () => {
  let server: Server;
  let dir: string;
  beforeAll(async () => {
    server = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'vitals-measure-'));
  });
  afterAll(async () => {
    await server?.close();
  });

  it('a file that is not a decodable video settles failed: exit 5 with the job error; a re-run returns the same job', async () => {
    const key = await server.createKey();
    const video = join(dir, 'garbage.mp4');
    writeFileSync(
      video,
      new Uint8Array(64 * 1024).map((_, i) => (i * 7919) & 255),
    );
    const first = await runVitals(
      ['measure', video, '--consent', '--json', '--interval', '0.5'],
      credsEnv(key, server.baseUrl),
    );
    expect(first.code, first.stderr).toBe(5);
    const job = JSON.parse(first.stdout) as { jobId: string; status: string; error?: { code: string } };
    expect(job.status).toBe('failed');
    expect(job.error?.code).toBe('unsupported_media');
    expect(first.stderr).toMatch(/unsupported_media/);
    // same file, same options: the idempotency key repeats, so the service returns the same job
    const again = await runVitals(
      ['measure', video, '--consent', '--json', '--interval', '0.5'],
      credsEnv(key, server.baseUrl),
    );
    expect(again.code).toBe(5);
    expect((JSON.parse(again.stdout) as { jobId: string }).jobId).toBe(job.jobId);
    // the upload URL is a credential: never printed
    expect(first.stdout + first.stderr).not.toMatch(/https?:\/\/[^\s]*(upload|up_)/i);
  });

  it('an organization without token balance is refused: exit 4', async () => {
    const key = await server.createKey({ tokenBalanceUsd: 0 });
    const video = join(dir, 'small.mp4');
    writeFileSync(video, new Uint8Array(1024));
    const r = await runVitals(['measure', video, '--consent'], credsEnv(key, server.baseUrl));
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toMatch(/insufficient_tokens|quota_exceeded|token_quota_exceeded/);
  });

  it('polling that outlives --timeout exits 6 (the job is still queued at the first poll)', async () => {
    const key = await server.createKey();
    const video = join(dir, 'slow.mp4');
    // cheap for the worker afterwards (rejected as unsupported media), but not settled within 1 ms
    writeFileSync(
      video,
      new Uint8Array(32 * 1024).map((_, i) => (i * 104729) & 255),
    );
    const r = await runVitals(
      ['measure', video, '--consent', '--timeout', '0.001', '--interval', '0.001'],
      credsEnv(key, server.baseUrl),
    );
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toMatch(/still not settled/);
  });

  it.skipIf(!existsSync(FACE_VIDEO))(
    'a real face video completes: exit 0 and a readable summary',
    async () => {
      const key = await server.createKey();
      const r = await runVitals(
        ['measure', FACE_VIDEO, '--consent', '--user-ref', 'subject-10', '--features', 'hrv'],
        credsEnv(key, server.baseUrl),
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/Measurement meas_[0-9a-f]+ \(cloud, attested\)/);
      expect(r.stdout).toMatch(/Quality\s+(good|fair|poor)/);
      expect(r.stdout).toMatch(/Wellness estimates, not medical values/);
    },
    600_000,
  );
});
