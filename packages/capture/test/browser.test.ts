/**
 * Issue 15 §5 in a real browser on a real face: Debian's Chromium (playwright-core) with its fake
 * camera playing a labelled UBFC-rPPG recording (converted at test time to 30 fps MJPEG in a temp
 * dir, never committed), against `vitals-server serve` as `npm start` runs it (real process, SQLite,
 * embedded workers, the demo on). One 60-s capture on the device, one through the cloud stream,
 * and a covered camera. Skips loudly without Chromium or without the recordings.
 *
 * Screenshots go to $VITALS_SCREENSHOTS or a temp dir (never committed).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { VitalsClient } from '@vitals/sdk';
import { QUALITY_REASON_HINTS } from '@vitals/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumOrSkip, launchChromium } from '../../../scripts/testing/chromium.js';
import { REPO_ROOT, startServe, type Served } from '../../../scripts/testing/serve.js';
import { expectCameraKeptUp, replay } from './support/camera-run.js';

const run = promisify(execFile);
const DATA = [path.resolve(REPO_ROOT, '../shared/data'), path.resolve(REPO_ROOT, '../../shared/data')].find((d) =>
  existsSync(path.join(d, 'ubfc2')),
);
/**
 * Subject 12 for 60 s, by the rule of docs/capture.md "The test clip" (scripts/testing/
 * pick-camera-subject.ts, which never looks at a browser result): of the labelled subjects and the
 * lengths 40 and 60 s, the one whose worst capture window (starting 0..8 s into the clip) has the
 * highest quality score through the Node video pipeline: 0.51 (fair; every other subject 0.23 or
 * less, subject 12's own 40 s 0.39, poor).
 */
const SUBJECT = { video: 'ubfc2/subject12/vid.mp4', referenceBpm: 66.56 };
const CAPTURE_SEC = 60;
/**
 * Each capture is a new measurement, and this clip sits on the publication edge: the same 60 s
 * tracked from ten starting frames 0.1 s apart (the page's detection phase varies like that) in
 * Node graded 8 fair, 2 poor (scores 0.39-0.56, internal rates 65.1-67.6 bpm, every one within 1.5
 * bpm; docs/capture.md "The test clip"). So about one capture in five withholds a correct rate; two
 * more captures bring a test's chance of failing on that to about 1 in 125. A late fake camera is
 * told apart (OVERLOADED RUN), and a stream that loses or changes a crop fails every try.
 */
const CAPTURE_RETRIES = 2;
const HAS_CHROMIUM = chromiumOrSkip() !== undefined;
/**
 * Chromium and the service run at a raised priority where allowed (CI runs as root): the fake camera
 * plays its file on the CPU and falls behind for good when starved by other jobs, which a real
 * camera's hardware clock never does (docs/capture.md "An overloaded run").
 */
const NICENESS = -10;
if (HAS_CHROMIUM && !DATA) console.warn('\n*** SKIPPED: browser tests: ../shared/data/ubfc2 not found ***\n');

const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

/**
 * The element's last outcome: the kept frames file (base64: a 6 MB file as a JSON array of numbers
 * took minutes through the DevTools protocol on a loaded machine) and the capture's and engine's stats.
 */
async function keptOutcome(page: Page): Promise<{ file: Uint8Array; capture: any; engine: any }> {
  const kept = await page.evaluate(() => {
    const el = document.querySelector('vitals-measure') as unknown as {
      lastOutcome?: { framesFile?: Uint8Array; stats: unknown; measurement?: { stats: unknown } };
    };
    const o = el.lastOutcome;
    const bytes = o?.framesFile ?? new Uint8Array(0);
    let bin = '';
    for (let i = 0; i < bytes.length; i += 0x8000)
      bin += String.fromCharCode(...bytes.subarray(i, Math.min(i + 0x8000, bytes.length)));
    return { file: btoa(bin), capture: o?.stats, engine: o?.measurement?.stats };
  });
  return { ...kept, file: new Uint8Array(Buffer.from(kept.file, 'base64')) };
}

interface PageOutcome {
  ok: boolean;
  detail: Record<string, any>;
  hr: number[];
  guidance: string[];
}

const tmp = mkdtempSync(path.join(tmpdir(), 'vitals-browser-'));
const shots = process.env.VITALS_SCREENSHOTS ?? path.join(tmp, 'screenshots');
mkdirSync(shots, { recursive: true });

async function ffmpeg(args: string[]): Promise<void> {
  const { resolveFfmpeg } = await import('@vitals/media');
  await run(resolveFfmpeg().ffmpeg, ['-v', 'error', '-y', ...args], { timeout: 180_000 });
}

/** Records every request; anything not for the service (or a blob:/data: URL of the page) is refused. */
async function guard(ctx: BrowserContext, origin: string, foreign: string[]): Promise<void> {
  await ctx.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(origin + '/') || url === origin) return route.continue();
    foreign.push(url);
    return route.abort('blockedbyclient');
  });
}

/** Opens the demo and waits for `vitals:result` / `vitals:error` (CONTRACT.md "Demo page"). */
async function measure(page: Page, url: string): Promise<PageOutcome> {
  await page.addInitScript(() => {
    const w = window as unknown as { __vitals: unknown };
    const hr: number[] = [];
    const guidance: string[] = [];
    document.addEventListener('vitals-measure:hr', (e) => hr.push((e as CustomEvent).detail.hr));
    document.addEventListener('vitals-measure:guidance', (e) => guidance.push((e as CustomEvent).detail.code));
    w.__vitals = new Promise((resolve) => {
      document.addEventListener('vitals:result', (e) =>
        resolve({ ok: true, detail: (e as CustomEvent).detail, hr, guidance }),
      );
      document.addEventListener('vitals:error', (e) =>
        resolve({ ok: false, detail: (e as CustomEvent).detail, hr, guidance }),
      );
    });
  });
  await page.goto(url);
  return (await page.evaluate(() => (window as unknown as { __vitals: unknown }).__vitals)) as PageOutcome;
}

describe.skipIf(!HAS_CHROMIUM || !DATA)(
  'the browser capture in Chromium, on a real face (UBFC-rPPG subject 12)',
  () => {
    let served: Served;
    let browser: Browser;
    let client: VitalsClient;
    let earlyGrant: { grant: string; expiresAt: number; manifestUrl: string };
    const foreign: string[] = [];
    let onDevice: PageOutcome;
    let framesFile: Uint8Array;

    beforeAll(async () => {
      const camera = path.join(tmp, 'face.mjpeg');
      // MJPEG always plays at 30 fps: resample to exactly 30 fps so it keeps real time.
      await Promise.all([
        ffmpeg(['-i', path.join(DATA!, SUBJECT.video), '-an', '-vf', 'fps=30', '-q:v', '2', '-f', 'mjpeg', camera]),
        startServe({}, NICENESS).then((s) => (served = s)),
      ]);
      client = new VitalsClient({ keyId: served.keyId, secret: served.secret, baseUrl: served.baseUrl });
      // Minted now with the shortest lifetime: it has expired once the captures below are done.
      earlyGrant = await client.models.grant({ ttlSec: 30 });
      browser = await launchChromium({ fakeCameraFile: camera, niceness: NICENESS });
    }, 240_000);

    afterAll(async () => {
      await browser?.close();
      await served?.stop();
    });

    it(
      'on the device: the result within 3 bpm of the reference, stored through the demo backend',
      { retry: CAPTURE_RETRIES, timeout: 240_000 },
      async () => {
        const ctx = await browser.newContext({ viewport: { width: 760, height: 1100 } });
        await guard(ctx, served.baseUrl, foreign);
        const page = await ctx.newPage();
        setTimeout(
          () => void page.screenshot({ path: path.join(shots, 'on-device-measuring.png') }).catch(() => {}),
          20_000,
        );
        onDevice = await measure(
          page,
          `${served.baseUrl}/?mode=on-device&autostart=1&durationSec=${CAPTURE_SEC}&keepFrames=1`,
        );
        await page.screenshot({ path: path.join(shots, 'on-device-result.png'), fullPage: true });
        const kept = await keptOutcome(page);
        framesFile = kept.file;
        console.log(
          'on-device capture',
          JSON.stringify({
            load: load(),
            capture: kept.capture,
            engine: kept.engine,
            quality: onDevice.detail.quality,
          }),
        );
        const replayed = replay(framesFile);
        console.log('on-device packets replayed in Node', JSON.stringify({ ...replayed, pageLiveHr: onDevice.hr }));
        expect(onDevice.ok, JSON.stringify(onDevice.detail)).toBe(true);
        const m = onDevice.detail;
        expect(m).toMatchObject({ origin: 'on_device', attested: false, source: 'web', sdkVersion: '0.1.0' });
        expect(m.id).toMatch(/^meas_/);
        expect(m.modelsVersion).toMatch(/^human-/);
        // The stored measurement is exactly what GET returns.
        expect(await client.measurements.get(m.id)).toEqual(m);
        expectCameraKeptUp('on the device', kept.capture, CAPTURE_SEC, load());
        const hr = m.cardiac?.heartRate?.value as number | undefined;
        expect(hr, `no published rate (quality ${JSON.stringify(m.quality)})`).toBeTypeOf('number');
        expect(Math.abs(hr! - SUBJECT.referenceBpm)).toBeLessThanOrEqual(3);
        // Live hr events from the worker: exactly the engine's over the same packets (a live rate is
        // sent only while the capture so far would publish, so a weak real pulse may send few or
        // none: docs/engine.md), and each within 5 bpm of the stored rate.
        expect(onDevice.hr).toEqual(replayed.liveHr);
        for (const v of onDevice.hr) expect(Math.abs(v - hr!)).toBeLessThanOrEqual(5);
        await ctx.close();
      },
    );

    it('the kept frames file, uploaded as a frames job, gives the on-device heart rate within 0.5 bpm', async () => {
      expect(framesFile?.length).toBeGreaterThan(1000);
      const job = await client.jobs.submit({ kind: 'frames', body: framesFile, consent: true });
      const done = await client.jobs.wait(job.jobId, { timeoutMs: 120_000, intervalMs: 500 });
      expect(done.status, JSON.stringify(done.error)).toBe('completed');
      // One estimator: the job grades the capture as the page did, and publishes the same rate.
      const job_ = done.measurement!;
      expect(job_.quality).toEqual(onDevice.detail.quality);
      const pageHr = onDevice.detail.cardiac?.heartRate?.value;
      const jobHr = job_.cardiac?.heartRate?.value;
      console.log('frames job vs on-device', JSON.stringify({ jobHr, pageHr, quality: job_.quality }));
      expect(jobHr).toBeTypeOf('number'); // a published rate (fails with the on-device one on a poor capture)
      expect(Math.abs(jobHr! - pageHr)).toBeLessThanOrEqual(0.5);
    }, 180_000);

    // The same page through the cloud stream, its capture kept as a frames file: the server's result
    // is checked against those packets in Node (the stream lost nothing and computed what the engine
    // computes), then against the reference like the on-device one.
    it(
      'in the cloud: the stream from the same page stores an attested measurement within 3 bpm',
      { retry: CAPTURE_RETRIES, timeout: 240_000 },
      async () => {
        const ctx = await browser.newContext({ viewport: { width: 760, height: 1100 } });
        await guard(ctx, served.baseUrl, foreign);
        const page = await ctx.newPage();
        let sessionId: string | undefined;
        page.on('response', (res) => {
          if (res.url().endsWith('/demo/api/session'))
            void res
              .json()
              .then(
                (b: { sessionId?: string; data?: { sessionId?: string } }) =>
                  (sessionId = b.data?.sessionId ?? b.sessionId),
              );
        });
        const cloud = await measure(
          page,
          `${served.baseUrl}/?mode=cloud&autostart=1&durationSec=${CAPTURE_SEC}&keepFrames=1`,
        );
        await page.screenshot({ path: path.join(shots, 'cloud-result.png'), fullPage: true });
        expect(cloud.ok, JSON.stringify(cloud.detail)).toBe(true);
        expect(cloud.detail).toMatchObject({ origin: 'cloud', attested: true });
        expect(await client.measurements.get(cloud.detail.id)).toEqual(cloud.detail);
        const kept = await keptOutcome(page);
        const job = sessionId ? await client.jobs.get(sessionId) : undefined;
        const stream = (job as { stats?: { stream?: { received: number; dropped: number; processed: number } } })?.stats
          ?.stream;
        const server = { quality: cloud.detail.quality, hr: cloud.detail.cardiac?.heartRate?.value ?? null, stream };
        const node = replay(kept.file);
        console.log('cloud capture', JSON.stringify({ load: load(), capture: kept.capture, server }));
        console.log('cloud packets replayed in Node', JSON.stringify(node));
        await ctx.close();
        // Every crop the page sent was processed, and the server's engine gave what Node's gives.
        expect(stream).toMatchObject({ received: node.crops, dropped: 0, processed: node.crops });
        expect(server.quality.level).toBe(node.offline.level);
        if (node.offline.hr === null) expect(server.hr).toBeNull();
        else expect(Math.abs(server.hr! - node.offline.hr)).toBeLessThanOrEqual(0.1);
        expectCameraKeptUp('in the cloud', kept.capture, CAPTURE_SEC, load());
        expect(server.hr, `no published rate (quality ${JSON.stringify(server.quality)})`).toBeTypeOf('number');
        expect(Math.abs(server.hr! - SUBJECT.referenceBpm)).toBeLessThanOrEqual(3);
      },
    );

    it('no request left for any host but the service', () => {
      expect(foreign).toEqual([]);
    });

    it('model files are refused without a grant and with an expired one', async () => {
      const fresh = await client.models.grant({});
      const manifest = await fetch(fresh.manifestUrl, { headers: { Authorization: `Bearer ${fresh.grant}` } });
      expect(manifest.status).toBe(200);
      const files = ((await manifest.json()) as { data: { files: { name: string; url: string }[] } }).data.files;
      const file = new URL(files.find((f) => f.name === 'blazeface.bin')!.url, fresh.manifestUrl).href;
      expect(Date.now()).toBeGreaterThan(earlyGrant.expiresAt);
      const cases: [string, Record<string, string>, number][] = [
        ['valid grant', { Authorization: `Bearer ${fresh.grant}` }, 200],
        ['no grant', {}, 401],
        ['expired grant', { Authorization: `Bearer ${earlyGrant.grant}` }, 401],
      ];
      for (const [name, headers, status] of cases) {
        for (const url of [fresh.manifestUrl, file]) {
          const res = await fetch(url, { headers });
          expect({ name, url, status: res.status }).toEqual({ name, url, status });
          if (status === 401)
            expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
        }
      }
    }, 60_000);
  },
);

// The temp folder (converted camera files) is shared by both suites: removed once, after both.
afterAll(() => {
  if (!process.env.VITALS_SCREENSHOTS) rmSync(tmp, { recursive: true, force: true });
});

describe.skipIf(!HAS_CHROMIUM)('a covered camera (black video)', () => {
  let served: Served;
  let browser: Browser;

  beforeAll(async () => {
    const black = path.join(tmp, 'black.mjpeg');
    await Promise.all([
      ffmpeg(['-f', 'lavfi', '-i', 'color=c=black:size=640x480:rate=30:duration=3', '-q:v', '2', '-f', 'mjpeg', black]),
      startServe().then((s) => (served = s)),
    ]);
    browser = await launchChromium({ fakeCameraFile: black });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await served?.stop();
  });

  it('shows the "too dark" hint in plain words, in a live region', async () => {
    const page = await browser.newPage({ viewport: { width: 760, height: 900 } });
    await page.goto(`${served.baseUrl}/?mode=on-device&autostart=1&durationSec=20`);
    const hint = page.locator('vitals-measure .hint');
    await expect.poll(async () => (await hint.textContent()) ?? '', { timeout: 60_000 }).toMatch(/too dark/i);
    expect(await hint.getAttribute('aria-live')).toBe('assertive');
    // The page names its icon (else the browser asks for /favicon.ico, a 404), served by us.
    const icon = await page.evaluate(() => document.querySelector<HTMLLinkElement>('link[rel="icon"]')?.href);
    expect(icon).toBe(`${served.baseUrl}/capture/favicon.svg`);
    const res = await fetch(icon!);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    await page.screenshot({ path: path.join(shots, 'covered-camera.png') });
    // The result of 20 s without a face names the face as what to fix, not the capture's length
    // (the capture tells the engine its share of frames with a face: none here).
    const reasons = page.locator('vitals-measure ul.reasons li');
    await expect
      .poll(async () => await reasons.allTextContents(), { timeout: 60_000 })
      .toEqual([QUALITY_REASON_HINTS.face_lost]);
    await page.screenshot({ path: path.join(shots, 'covered-camera-result.png') });
    await page.close();
  }, 150_000);
});
