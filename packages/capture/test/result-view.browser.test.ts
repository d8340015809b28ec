/**
 * The result view in Chromium (the built browser bundle, served as the demo serves it): a poor
 * measurement lists each quality reason's hint under the quality line, in the order given, with its
 * code; a clean one shows no list. No camera: the view is rendered from a measurement directly.
 */
import { createServer, type Server } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUALITY_REASON_HINTS } from '@vitals/protocol';
import { chromiumOrSkip, launchChromium } from '../../../scripts/testing/chromium.js';

const DIST = path.resolve(import.meta.dirname, '../dist/browser');
const RUN = chromiumOrSkip() !== undefined && existsSync(path.join(DIST, 'vitals-capture.js'));
if (!RUN) console.warn('\n*** SKIPPED: result view in Chromium: no Chromium or no built bundle ***\n');

let server: Server;
let base: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (!RUN) return;
  server = createServer((req, res) => {
    const name = (req.url ?? '/').split('?')[0].slice(1);
    if (name === '') {
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><title>result</title><main id="r"></main>');
      return;
    }
    const file = path.join(DIST, path.basename(name));
    if (!existsSync(file)) {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader('content-type', 'text/javascript');
    res.end(readFileSync(file));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address() as { port: number };
  base = `http://127.0.0.1:${addr.port}`;
  browser = await launchChromium();
  page = await browser.newPage();
  await page.goto(`${base}/`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
});

/**
 * Renders `m` with the bundle's `renderResult` into the page's main element. A string, so that the
 * test runner does not rewrite the page's `import()`.
 */
async function render(m: object): Promise<void> {
  await page.evaluate(
    `import(${JSON.stringify(`${base}/vitals-capture.js`)}).then((mod) => mod.renderResult(document.getElementById('r'), ${JSON.stringify(m)}))`,
  );
}

describe.skipIf(!RUN)('result view: quality reasons', () => {
  it('a poor result lists each reason with its hint, in order', async () => {
    const reasons = (['low_light', 'motion'] as const).map((code) => ({ code, hint: QUALITY_REASON_HINTS[code] }));
    await render({ durationSec: 30, quality: { level: 'poor', score: 0.2, usable: false, reasons } });
    const items = page.locator('#r ul.reasons li');
    expect(await items.allTextContents()).toEqual(reasons.map((r) => r.hint));
    expect(await items.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.code))).toEqual([
      'low_light',
      'motion',
    ]);
    // Under the quality line, before the metrics.
    const order = await page.evaluate(() => Array.from(document.getElementById('r')!.children, (e) => e.tagName));
    expect(order.slice(0, 4)).toEqual(['H3', 'P', 'UL', 'DL']);
    expect(await page.locator('#r p.quality').textContent()).toContain('Poor signal');
  });

  it('absent figures say why and are marked as absent (dd.absent, a lighter style in the element)', async () => {
    await render({
      durationSec: 60,
      quality: {
        level: 'fair',
        score: 0.5,
        usable: true,
        reasons: [{ code: 'hrv_withheld', hint: QUALITY_REASON_HINTS.hrv_withheld }],
      },
      cardiac: { heartRate: { value: 66, unit: 'bpm' } },
      hrv: null,
      stress: null,
    });
    expect(await page.locator('#r ul.reasons li').allTextContents()).toEqual([QUALITY_REASON_HINTS.hrv_withheld]);
    const absent = page.locator('#r dd.absent');
    expect(await absent.allTextContents()).toEqual([
      'withheld: the beats were not clean enough',
      'not available',
      'withheld: the beats were not clean enough',
      'not available',
      'not available',
    ]);
  });

  it('a result without reasons shows no list', async () => {
    await render({
      durationSec: 60,
      quality: { level: 'good', score: 0.8, usable: true, reasons: [] },
      cardiac: { heartRate: { value: 66, unit: 'bpm' } },
    });
    expect(await page.locator('#r ul.reasons').count()).toBe(0);
    expect(await page.locator('#r dd').first().textContent()).toBe('66 bpm');
  });
});
