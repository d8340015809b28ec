/**
 * A running job's progress (docs/decisions.md, "Progress"): while a video job runs, GET returns
 * `stats.progress {stage, fraction}` and it moves, written at least every PROGRESS_WRITE_MS with the
 * lease renewal (the default 30 s lease alone would renew every 10 s, after most jobs have ended);
 * once settled, `stats` holds the engine's and the media's statistics instead. A real video (a 60 s
 * UBFC-rPPG cut made with ffmpeg, cached in the OS temp dir); skipped without the data.
 */
import { describe, expect, test } from 'vitest';
import { createJob, json, systemClock, ubfcVideo, videoCut } from './batch-world.js';
import { createWorld } from '../src/testing.js';
import { PROGRESS_WRITE_MS } from '../src/batch/worker.js';

const VIDEO = ubfcVideo('subject5');

describe.skipIf(!VIDEO)('job progress', () => {
  test('a running video job shows its stage and a growing fraction; a settled one its statistics', async () => {
    const clip = await videoCut(VIDEO!, 60);
    const w = await createWorld({ batch: { embeddedWorker: false, concurrency: 1 }, clock: systemClock });
    try {
      await w.rt.startWorker();
      const j = await createJob(w, clip, { kind: 'video', features: ['hrv'] });
      const seen: { stage: string; fraction: number }[] = [];
      let job: any;
      const deadline = Date.now() + 240_000;
      for (;;) {
        job = json(await w.call({ url: `/sdk/v1/cloud/jobs/${j.jobId}` })).data;
        if (job.status === 'running' && job.stats?.progress) seen.push(job.stats.progress);
        if (!['queued', 'running'].includes(job.status) || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, PROGRESS_WRITE_MS / 5));
      }
      expect(job.status).toBe('completed');
      // Following the face takes seconds: polled five times a write, some answers land inside it.
      const decoding = seen.filter((p) => p.stage === 'decoding').map((p) => p.fraction);
      expect(
        decoding.some((f) => f > 0 && f < 1),
        JSON.stringify(seen),
      ).toBe(true);
      expect(decoding).toEqual([...decoding].sort((a, b) => a - b));
      for (const p of seen) expect(p.fraction).toBeGreaterThanOrEqual(0);
      // Settled: the statistics replace the progress.
      expect(job.stats.progress).toBeUndefined();
      expect(job.stats.engine).toBeDefined();
      expect(job.stats.media).toBeDefined();
    } finally {
      await w.close();
    }
  }, 300_000);
});
