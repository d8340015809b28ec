/**
 * The soak's steady mix (scripts/soak/index.ts): `auto`-delivery streaming captures through the SDK's
 * StreamSession (the socket may die; the SDK then uploads the capture through the session fallback),
 * batch jobs through the SDK (retried with the same idempotency key), and signed API calls without
 * retries (an unanswered POST has an unknown outcome, so it is never repeated). Everything a
 * client was told is recorded, for the checks.
 */
import { encodeFaceCrop, encodeFramesFile, randomHex, signRequest, type Packet } from '@vitals/protocol';
import { generatePhantom } from '@vitals/engine';
import { StreamSession, VitalsClient } from '@vitals/sdk';

export interface Records {
  captures: Array<{ sessionId: string; fellBack: boolean; via?: string; measurementId?: string; error?: string }>;
  jobs: Array<{ idempotencyKey: string; jobId?: string; error?: string }>;
  calls: Array<{ userRef: string; outcome: 'stored' | 'refused' | 'unknown'; status?: number; id?: string }>;
  sessionsRefused: number;
}

type Key = { keyId: string; secret: string };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Twenty seconds of a phantom face at 30 fps: its crops, and a frames file per seed. */
const PHANTOM = generatePhantom({ durationSec: 20, fps: 30, seed: 11 }).packets.filter(
  (p): p is Extract<Packet, { type: 1 }> => p.type === 1,
);
const FILES = [3, 5, 7].map((seed) => {
  const crops = generatePhantom({ durationSec: 22, fps: 30, seed }).packets.filter((p) => p.type === 1);
  return encodeFramesFile(
    crops.map((p) => encodeFaceCrop(p as Extract<Packet, { type: 1 }>)),
    22e6,
  );
});

export class Load {
  readonly records: Records = { captures: [], jobs: [], calls: [], sessionsRefused: 0 };
  private stopping = false;
  private readonly running: Promise<void>[] = [];
  private readonly client: VitalsClient;

  constructor(
    private readonly baseUrl: string,
    private readonly key: Key,
  ) {
    this.client = new VitalsClient({ ...key, baseUrl, logger: { warn: () => undefined } as never });
  }

  start(opts: { streams: number }): void {
    for (let i = 0; i < opts.streams; i++) this.running.push(this.loop(() => this.capture(), 500));
    this.running.push(this.loop(() => this.job(), 4000));
    this.running.push(this.loop(() => this.call(), 200));
  }

  progress(): Record<string, number> {
    const r = this.records;
    return {
      captures: r.captures.length,
      capturesOpen: r.captures.filter((c) => !c.measurementId && !c.error).length,
      jobs: r.jobs.length,
      calls: r.calls.length,
    };
  }

  /** Stops starting new work and waits for what is in flight to end. */
  async drain(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.running);
  }

  private async loop(work: () => Promise<void>, pauseMs: number): Promise<void> {
    while (!this.stopping) {
      await work().catch(() => undefined);
      await sleep(pauseMs);
    }
  }

  /** One 20 s capture, `auto` delivery, paced at 30 fps. */
  private async capture(): Promise<void> {
    let session;
    try {
      session = await this.client.sessions.create({ platform: 'web', durationSec: 20, consent: true });
    } catch {
      this.records.sessionsRefused++; // nothing accepted, nothing to lose
      await sleep(1000);
      return;
    }
    const rec: Records['captures'][number] = { sessionId: session.sessionId, fellBack: false };
    this.records.captures.push(rec);
    const live = new StreamSession({ session, resultTimeoutMs: 240_000, connectTimeoutMs: 5000 });
    live.on('fallback', () => (rec.fellBack = true));
    await live.start();
    const t0 = Date.now();
    for (let i = 0; i < PHANTOM.length; i++) {
      const due = t0 + (PHANTOM[i].tMicros - PHANTOM[0].tMicros) / 1000;
      if (due > Date.now()) await sleep(due - Date.now());
      live.sendFrame({ pixels: PHANTOM[i].pixels, tMicros: PHANTOM[i].tMicros });
    }
    try {
      const final = await live.stop();
      rec.via = final.via;
      rec.measurementId = final.measurementId;
    } catch (err) {
      rec.error = String((err as Error).message ?? err);
    }
  }

  /** One frames job; its creation retried with the same idempotency key until accepted. */
  private async job(): Promise<void> {
    const idempotencyKey = `soak-job-${randomHex(8)}`;
    const rec: Records['jobs'][number] = { idempotencyKey };
    this.records.jobs.push(rec);
    const body = FILES[this.records.jobs.length % FILES.length];
    for (let attempt = 0; attempt < 30 && !rec.jobId; attempt++) {
      try {
        rec.jobId = (await this.client.jobs.submit({ kind: 'frames', body, idempotencyKey, consent: true })).jobId;
        rec.error = undefined;
      } catch (err) {
        rec.error = String((err as Error).message ?? err);
        await sleep(1000);
      }
    }
  }

  /** One signed POST /sdk/v1/measurements, never retried. */
  private async call(): Promise<void> {
    const userRef = `soak-api-${randomHex(8)}`;
    const body = JSON.stringify({
      source: 'web',
      durationSec: 60,
      isComplete: true,
      userRef,
      quality: { level: 'good', score: 0.9, usable: true },
      cardiac: { heartRate: { value: 72, unit: 'bpm', confidence: 0.9 } },
    });
    const path = '/sdk/v1/measurements';
    const headers = await signRequest({ ...this.key, method: 'POST', path, body });
    const rec: Records['calls'][number] = { userRef, outcome: 'unknown' };
    this.records.calls.push(rec);
    try {
      const res = await fetch(`${this.baseUrl}${path}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(15_000),
      });
      rec.status = res.status;
      const json = (await res.json()) as { ok: boolean; data?: { id: string } };
      if (res.status === 201 && json.ok) [rec.outcome, rec.id] = ['stored', json.data!.id];
      else rec.outcome = 'refused';
    } catch (err) {
      // No connection at all: nothing was sent. Any other failure: stored or not, nobody was told.
      const code = ((err as Error).cause as { code?: string } | undefined)?.code;
      rec.outcome = code === 'ECONNREFUSED' ? 'refused' : 'unknown';
      if (code === 'ECONNREFUSED') rec.status = 0;
    }
  }
}
