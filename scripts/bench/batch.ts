// Batch tier (issue 6): jobs per minute for 30 s frames files on one worker; the ratio of a job's
// processing time to the offline estimator alone on the same packets (what the queue, the store,
// the object store, decoding and settlement add); upload throughput of `PUT {uploadUrl}` against
// writing the same bytes to disk. One process: a listening server (buildServer, SQLite in a temp
// dir, the embedded worker with concurrency 1), requests over loopback HTTP, signed with NCS1.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { HeadlineRow, SectionOutput } from '../headline.js';
import { median } from './parts/stats.js';

const QUICK = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';
const JOBS = QUICK ? 6 : 20;
const UPLOAD_MB = QUICK ? 16 : 60;

const fmt = (v: number, d = 1): string => v.toFixed(d);

/** PUT with node:http, the body written in 1 MB chunks (a plain client, as a server-side uploader would). */
function httpPut(url: string, contentType: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'PUT', headers: { 'content-type': contentType, 'content-length': String(body.length) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    let at = 0;
    const write = (): void => {
      while (at < body.length) {
        const chunk = body.subarray(at, at + (1 << 20));
        at += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

export async function run(): Promise<SectionOutput> {
  const { loadConfig } = await import('../../packages/server/src/config.js');
  const { createContext, closeContext } = await import('../../packages/server/src/deps.js');
  const { buildServer } = await import('../../packages/server/src/server.js');
  const { makeKey } = await import('../../packages/server/src/testing.js');
  const { signRequest, encodeFramesFile, encodeFaceCrop, encodeTelemetry, encodeQuality, decodeFramesFile } =
    await import('@vitals/protocol');
  const { generatePhantom, estimateOffline } = await import('@vitals/engine');

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-bench-batch-'));
  const config = loadConfig({ VITALS_DATA_DIR: dataDir });
  const ctx = await createContext(config, { env: {}, batch: { embeddedWorker: false, concurrency: 1, pollMs: 20 } });
  const { app } = await buildServer(ctx);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  ctx.publicUrl = base;
  const key = await makeKey(ctx, { tokenBalanceUsd: 1000 });
  const signed = async (method: string, p: string, body?: object): Promise<any> => {
    const bytes = body === undefined ? undefined : JSON.stringify(body);
    const h = await signRequest({ keyId: key.keyId, secret: key.secret, method, path: p, body: bytes });
    const res = await fetch(`${base}${p}`, {
      method,
      headers: { ...h, ...(bytes ? { 'content-type': 'application/json' } : {}) },
      body: bytes,
    });
    return res.json();
  };

  try {
    // A 30 s, 30 fps phantom capture with telemetry and quality packets, as a frames file.
    const { packets } = generatePhantom({ durationSec: 30, fps: 30, telemetry: true, seed: 3 });
    const encoded = packets.map((p) =>
      p.type === 1 ? encodeFaceCrop(p) : p.type === 3 ? encodeTelemetry(p) : encodeQuality(p as any),
    );
    const file = encodeFramesFile(encoded, 30e6);
    const sha = createHash('sha256').update(file).digest('hex');

    // The estimator alone on the same packets.
    const decoded = decodeFramesFile(file);
    if (!decoded.ok) throw new Error(decoded.error);
    estimateOffline(decoded.packets);
    const alone: number[] = [];
    for (let i = 0; i < 7; i++) {
      const t = performance.now();
      estimateOffline(decoded.packets);
      alone.push(performance.now() - t);
    }

    // Queue JOBS jobs with the worker stopped, then start one worker and time the drain.
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) {
      const up = (await signed('POST', '/sdk/v1/cloud/uploads/presign', { kind: 'frames' })).data;
      const put = await fetch(up.uploadUrl, {
        method: 'PUT',
        headers: { 'content-type': up.contentType },
        body: file as unknown as BodyInit,
      });
      if (put.status !== 200) throw new Error(`PUT ${put.status}`);
      const job = await signed('POST', '/sdk/v1/cloud/jobs', {
        objectKey: up.objectKey,
        kind: 'frames',
        sha256: sha,
        idempotencyKey: `bench-${Date.now()}-${i}`,
        consent: true,
        features: ['hrv', 'bp', 'spo2'],
      });
      ids.push(job.data.jobId);
    }
    const t0 = performance.now();
    await ctx.batch!.startWorker();
    for (;;) {
      const left = await ctx.db.db
        .selectFrom('cloud_jobs')
        .select('id')
        .where('id', 'in', ids)
        .where('status', 'in', ['queued', 'running'])
        .execute();
      if (left.length === 0) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const drainMs = performance.now() - t0;
    for (let i = 0; i < 7; i++) {
      const t = performance.now();
      estimateOffline(decoded.packets);
      alone.push(performance.now() - t);
    }
    const rows = await ctx.db.db
      .selectFrom('cloud_jobs')
      .select(['status', 'started_at', 'finished_at'])
      .where('id', 'in', ids)
      .execute();
    const completed = rows.filter((r) => r.status === 'completed').length;
    const jobMs = rows.map((r) => Number(r.finished_at) - Number(r.started_at));
    const perJobWall = drainMs / JOBS;

    // Upload throughput: PUT over loopback vs writing the same bytes to a file in the same data dir.
    const big = Buffer.alloc(UPLOAD_MB * 1024 * 1024, 0x5a);
    const putRates: number[] = [];
    const diskRates: number[] = [];
    for (let i = 0; i < 3; i++) {
      const up = (await signed('POST', '/sdk/v1/cloud/uploads/presign', { kind: 'video' })).data;
      let t = performance.now();
      const status = await httpPut(up.uploadUrl, up.contentType, big);
      if (status !== 200) throw new Error(`PUT ${status}`);
      putRates.push(UPLOAD_MB / ((performance.now() - t) / 1000));
      const f = path.join(dataDir, `disk-${i}.bin`);
      t = performance.now();
      await fs.promises.writeFile(f, big);
      diskRates.push(UPLOAD_MB / ((performance.now() - t) / 1000));
      fs.rmSync(f);
    }

    const load = os.loadavg()[0].toFixed(1);
    const cpus = os.cpus();
    const cmd = '`npm run bench -- batch`';
    const headline: HeadlineRow[] = [
      {
        area: 'Batch',
        figure: `frames jobs per minute, one worker (${JOBS} jobs of a 30 s capture)`,
        value: fmt((JOBS / drainMs) * 60_000),
        target: '–',
        met: null,
        reference: `wall time per job ${fmt(perJobWall / median(alone), 2)}× the offline estimator alone (medians)`,
        command: cmd,
      },
      {
        area: 'Batch',
        figure: `\`PUT {uploadUrl}\` of ${UPLOAD_MB} MB over loopback`,
        value: `${fmt(median(putRates))} MB/s`,
        target: '–',
        met: null,
        reference: `${fmt(median(putRates) / median(diskRates), 2)}× writing the same bytes to a file in the data dir`,
        command: cmd,
      },
    ];
    const markdown = [
      '## Batch',
      '',
      `Measured by \`scripts/bench/batch.ts\` (\`npm run bench -- batch\`${QUICK ? ', --quick' : ''}) on this machine (${cpus.length} cores, ${cpus[0]?.model.trim()}, Node ${process.version}; load average ${load} when the run ended — the machine is shared). One process: a listening server (buildServer, SQLite in a temp dir), requests over loopback HTTP signed with NCS1 (uploads with \`node:http\`), the embedded worker with concurrency 1. Jobs: ${JOBS} frames files of a 30 s, 30 fps phantom capture (${(file.length / 1e6).toFixed(2)} MB, ${packets.length} packets, features hrv, bp, spo2), uploaded and queued first, then one worker drains them.`,
      '',
      '| measure | value |',
      '| --- | --- |',
      `| jobs completed | ${completed} / ${JOBS} |`,
      `| jobs per minute, one worker (drain of the queue) | ${fmt((JOBS / drainMs) * 60_000)} |`,
      `| wall time per job in the drain (claim → settle → next) | ${fmt(perJobWall)} ms |`,
      `| job processing time, startedAt → finishedAt (median / best) | ${fmt(median(jobMs))} / ${fmt(Math.min(...jobMs))} ms |`,
      `| offline estimator alone on the same packets (median / best of 14, before and after the drain) | ${fmt(median(alone))} / ${fmt(Math.min(...alone))} ms |`,
      `| ratio: job processing time / estimator alone (medians; bests) | ${fmt(median(jobMs) / median(alone), 2)}; ${fmt(Math.min(...jobMs) / Math.min(...alone), 2)} |`,
      `| ratio: wall time per job / estimator alone (medians) | ${fmt(perJobWall / median(alone), 2)} |`,
      `| \`PUT {uploadUrl}\` of ${UPLOAD_MB} MB over loopback (median of 3) | ${fmt(median(putRates))} MB/s |`,
      `| writing the same bytes to a file in the data dir (median of 3) | ${fmt(median(diskRates))} MB/s |`,
      `| ratio: PUT / disk write | ${fmt(median(putRates) / median(diskRates), 2)} |`,
      '',
      'What a job adds to the estimator: reading the object, decoding and checking the frames file, the lease claim and renewals, the settlement transaction (measurement, job, metering, balance), deleting the object and journaling webhooks. PUT streams through the signature check of the URL, the SHA-256 and the size count into a temporary file that is renamed into place.',
    ].join('\n');
    return { markdown, headline };
  } finally {
    await app.close();
    await closeContext(ctx);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
