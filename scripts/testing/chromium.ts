/**
 * The browser tests' Chromium (issue 15 §5; CONTRACT-BROWSER "Browser tests"): Debian's `chromium`
 * driven by `playwright-core` (which downloads no browser). `.ci/run` installs the package when it
 * is missing; a test file skips itself when `chromiumPath()` is undefined and says so loudly.
 */
import fs from 'node:fs';
import type { Browser } from 'playwright-core';

const CANDIDATES = [process.env.VITALS_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** The Chromium executable, or undefined when none is installed. */
export function chromiumPath(): string | undefined {
  return CANDIDATES.find((p): p is string => !!p && fs.existsSync(p));
}

/** The flags of BRIEF-COMMON.md, plus Chromium's fake camera fed from `fakeCameraFile` (y4m or MJPEG). */
export async function launchChromium(opts: { fakeCameraFile?: string } = {}): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('SKIPPED: Chromium not found (install Debian package "chromium")');
  const args = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'];
  if (opts.fakeCameraFile)
    args.push(
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      `--use-file-for-fake-video-capture=${opts.fakeCameraFile}`,
    );
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath, args, headless: true });
}

/** For `describe.skipIf(!HAVE_CHROMIUM)`: warns once, loudly, when the browser tests cannot run. */
export function haveChromium(): boolean {
  if (chromiumPath()) return true;
  console.warn('SKIPPED: Chromium not found: the browser tests did not run (install Debian package "chromium")');
  return false;
}
