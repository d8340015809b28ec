/**
 * The shared Chromium launcher of the browser tests (CONTRACT-BROWSER "Browser tests"): Debian's
 * `chromium` driven by `playwright-core`, never a downloaded browser build. Flags: headless, no
 * sandbox (tests run as root), no GPU, no background networking (the machine has no network and
 * Chromium's own connections would be refused, many at a time), no first-run UI.
 */
import fs from 'node:fs';
import type { Browser } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The Chromium executable (`VITALS_CHROMIUM` first), or undefined when none is installed. */
export function chromiumPath(): string | undefined {
  const fromEnv = process.env.VITALS_CHROMIUM;
  if (fromEnv && fs.existsSync(fromEnv)) return fromEnv;
  return CANDIDATES.find((p) => fs.existsSync(p));
}

/** Launches headless Chromium; `fakeCameraFile` (a .y4m or .mjpeg) becomes the fake camera. */
export async function launchChromium(opts: { fakeCameraFile?: string } = {}): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('Chromium not found (install Debian package `chromium`)');
  const { chromium } = await import('playwright-core');
  const args = [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ];
  if (opts.fakeCameraFile) {
    args.push(
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      `--use-file-for-fake-video-capture=${opts.fakeCameraFile}`,
    );
  }
  return chromium.launch({ executablePath, headless: true, args });
}
