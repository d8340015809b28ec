/**
 * The shared Chromium launcher of the browser tests (CONTRACT-BROWSER "Browser tests"): Debian's
 * `chromium` driven by playwright-core, with the flags of BRIEF-COMMON and, for a camera page,
 * Chromium's fake camera fed from a file (y4m or MJPEG; MJPEG always plays at 30 fps, so the
 * tests resample to exactly 30 fps; the file loops).
 */
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { holdPriority } from './priority.js';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];

/** The Chromium binary: `CHROMIUM_PATH`, else Debian's; undefined when none is installed. */
export function chromiumPath(): string | undefined {
  const env = process.env.CHROMIUM_PATH;
  if (env && existsSync(env)) return env;
  return CANDIDATES.find((p) => existsSync(p));
}

/**
 * Launches headless Chromium; with `fakeCameraFile`, the page's camera plays that file (permission
 * granted). `niceness` (e.g. -10): the browser's scheduling priority. The fake camera plays its file
 * on the CPU and never catches up when starved (docs/capture.md "An overloaded run"), so a camera
 * test on a shared machine raises it to play in real time, as a real camera's hardware clock would.
 */
export async function launchChromium(opts: { fakeCameraFile?: string; niceness?: number } = {}): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('Chromium not found (install Debian chromium or set CHROMIUM_PATH)');
  const { chromium } = await import('playwright-core');
  const args = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'];
  args.push(
    '--use-fake-device-for-media-stream',
    '--use-fake-ui-for-media-stream',
    // Background tabs and occluded pages must not throttle the capture's timers and frames.
    '--disable-background-timer-throttling',
    '--disable-renderer-backgrounding',
    '--disable-backgrounding-occluded-windows',
  );
  if (opts.fakeCameraFile) args.push(`--use-file-for-fake-video-capture=${opts.fakeCameraFile}`);
  const browser = await chromium.launch({ executablePath, headless: true, args });
  if (opts.niceness) {
    // Every Chromium process this one started (the browser is launched from this process).
    const release = holdPriority({ root: process.pid, includeRoot: false, exe: /chrom/, niceness: opts.niceness });
    browser.on('disconnected', release);
  }
  return browser;
}

/** For test files: call at the top; skips loudly when there is no Chromium. */
export function chromiumOrSkip(): string | undefined {
  const p = chromiumPath();
  if (!p) console.warn('\n*** SKIPPED: Chromium not found: the browser tests did not run (install chromium). ***\n');
  return p;
}
