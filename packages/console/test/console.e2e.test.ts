/**
 * The console end to end in Chromium (issue 16 "Tested"): an operator creates an account with
 * `vitals-server accounts create`; a person signs in at /console, creates a key and sees its secret
 * once, adds a webhook endpoint pointing at a local HTTPS receiver, presses Send test event and sees
 * the delivery in the journal with its HTTP code, sees the overview's charts with data, an end
 * user's heart-rate history with the baseline corridor, a measurement's raw PPG, the usage log with
 * its live tail, and billing. Every page is saved as a screenshot under .artifacts/console/.
 * Elements are found by the accessible names fixed in CONTRACT.md "Console".
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { canonicalString, hmacBase64, QUALITY_REASON_HINTS, sha256Hex } from '@vitals/protocol';
import { closeContext, createContext, loadConfig } from '@vitals/server';
import { createOrg } from '../../server/src/store/orgs-keys.js';
import { insertMeasurement } from '../../server/src/store/measurements.js';
import { chromiumPath, launchChromium } from '../../../scripts/testing/chromium.js';
import { phantomFramesFile, sha256 } from '../../server/test/batch-world.js';
import { artifacts, ppgTrace, submission, waitFor, World } from './world.js';

const chromium = chromiumPath();
const built = fs.existsSync(path.resolve(import.meta.dirname, '../dist/index.html'));
if (!chromium) console.warn('SKIPPED: Chromium not found (console end-to-end test)');
if (!built) console.warn('SKIPPED: packages/console/dist is not built (npm install runs its prepare)');

const EMAIL = 'ada@example.com';
const PASSWORD = 'correct horse battery staple';
const DAY = 86_400_000;

const world = new World();
let browser: Browser;
let page: Page;
let orgId = '';

/** Saves the page; no page may scroll sideways, and at 1280 px no table either. */
const shot = async (name: string) => {
  await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
  const wide = await page.evaluate(() =>
    Array.from(document.querySelectorAll('body *'))
      .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
      .filter((e) => !e.closest('.table-wrap, .table-card'))
      .map((e) => `${e.tagName}.${e.className}`),
  );
  expect(wide, `${name}: elements wider than the window`).toEqual([]);
  // At desktop width the tables fit their cards too (on a phone they may scroll inside them).
  if ((page.viewportSize()?.width ?? 0) >= 1280) {
    const scrolling = await page.evaluate(() =>
      Array.from(document.querySelectorAll('.table-wrap, .table-card'))
        .filter((e) => e.scrollWidth > e.clientWidth + 1)
        .map((e) => e.querySelector('caption')?.textContent ?? e.className),
    );
    expect(scrolling, `${name}: tables that scroll sideways at 1280 px`).toEqual([]);
  }
};

beforeAll(async () => {
  if (!chromium || !built) return;
  fs.mkdirSync(artifacts, { recursive: true });
  await world.startReceiver();
  // The organization, with a token balance, straight into the data dir's store (its own command is
  // not the console's); then the operator's real `accounts create` path.
  const ctx = await createContext(loadConfig({ VITALS_DATA_DIR: world.dataDir }), {
    env: {},
    batch: { embeddedWorker: false },
  });
  orgId = (await createOrg(ctx.db.db, 'Acme Health', 25, Date.now())).id;
  await closeContext(ctx);
  const [account] = await Promise.all([
    world.cli(['accounts', 'create', '--email', EMAIL, '--org', orgId, '--password-stdin', '--json'], `${PASSWORD}\n`),
    world.startServer(),
  ]);
  expect(account).toMatchObject({ orgId, accountId: expect.any(String) });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  // A CSP violation or a script error is a defect of the page: collect them.
  // (Answers the test provokes are expected: 401 for /me before sign-in, the wrong password and /me
  // after sign-out; 400 for the refused endpoint URL.)
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 40[01]/.test(m.text())) pageErrors.push(m.text());
  });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
}, 120_000);

const pageErrors: string[] = [];

afterAll(async () => {
  await browser?.close();
  await world.close();
});

test.skipIf(!chromium || !built)(
  'sign in, keys, webhooks and the journal, overview charts, usage, end users, billing',
  async () => {
    // --- Sign in: a wrong password first (plain words), then the right one.
    await page.goto(`${world.baseUrl}/console/`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('The email or password is not right.');
    await shot('01-sign-in');
    // With the keyboard: the password, then Enter submits the form.
    await page.getByLabel('Password').fill(PASSWORD);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    for (const name of ['Overview', 'API keys', 'Webhooks', 'Usage', 'End users', 'Billing'])
      expect(await page.getByRole('link', { name, exact: true }).count()).toBe(1);
    expect(await page.getByText('Acme Health').count()).toBeGreaterThan(0);
    // A new organization: empty states, not empty charts.
    await page.getByText('No measurements this month').waitFor();
    await page.getByText('No refused calls').waitFor();
    await shot('01b-overview-empty');

    // --- API keys: create one; its secret is shown once.
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await page.getByText('No API keys yet').waitFor();
    // The dialog is keyboard-closable: Escape closes it, and the button opens it again.
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create key' });
    await dialog.getByLabel('Name').waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Create key' }).click();
    await dialog.getByLabel('Name').fill('Production backend');
    await dialog.getByLabel('Rate limit per minute').fill('600');
    await dialog.getByLabel('Monthly cloud seconds').fill('3600');
    await dialog.getByLabel('Monthly token cap (USD)').fill('20');
    await dialog.getByLabel('HRV').check();
    await dialog.getByRole('button', { name: 'Create', exact: true }).click();
    const secretBox = page.getByLabel('Key secret');
    await secretBox.waitFor();
    const secret = await secretBox.inputValue();
    const keyId = (await page.getByRole('region', { name: 'New key' }).locator('code').first().textContent())!.trim();
    expect(secret.length).toBeGreaterThan(20);
    expect(keyId).toMatch(/^key_/);
    await shot('02-keys-secret-once');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await page.reload();
    await page.getByRole('cell', { name: /Production backend/ }).waitFor();
    expect(await page.content()).not.toContain(secret);
    const row = page.getByRole('row', { name: /Production backend/ });
    expect(await row.textContent()).toContain('3,600');
    expect(await row.textContent()).toContain('$20.00');
    expect(await row.textContent()).toContain('HRV');
    // Disable, then enable again: the status follows.
    await row.getByRole('button', { name: 'Disable' }).click();
    await expect.poll(() => row.textContent()).toContain('Disabled');
    await row.getByRole('button', { name: 'Enable' }).click();
    await expect.poll(() => row.textContent()).toContain('Active');
    // Edit: the form opens with the key's values; a change shows in the list.
    await row.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit key' });
    expect(await edit.getByLabel('Monthly cloud seconds').inputValue()).toBe('3600');
    expect(await edit.getByLabel('HRV').isChecked()).toBe(true);
    await edit.getByLabel('Blood pressure').check();
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => row.textContent()).toContain('HRV, Blood pressure');
    await shot('03-keys-list');
    const key = { keyId, secret };

    // --- Traffic signed with that key: today's measurements (one with the raw PPG kept), refused
    // calls, and older history for the user's chart and baseline.
    const hrs = [64, 71, 68, 75, 66];
    for (const [i, hr] of hrs.entries()) {
      const r = await world.signed(
        key,
        'POST',
        '/sdk/v1/measurements',
        submission('alice', hr, i === 3 ? 'fair' : 'good'),
      );
      expect(r.status).toBe(201);
    }
    const poor = submission('bob', 0, 'poor');
    const bobs = await world.signed(key, 'POST', '/sdk/v1/measurements', {
      ...poor,
      quality: { ...poor.quality, reasons: [{ code: 'low_light', hint: 'a hint the service replaces' }] },
    });
    expect(bobs.status).toBe(201);
    const poorId: string = bobs.body.data.id;
    // A rate whose beats were not clean enough for HRV and stress: the engine's hrv_withheld reason.
    const withheldHrv = await world.signed(
      key,
      'POST',
      '/sdk/v1/measurements',
      submission('bob', 77, 'good', {
        hrv: null,
        stress: null,
        quality: { level: 'good', score: 0.9, usable: true, reasons: [{ code: 'hrv_withheld', hint: 'replaced' }] },
      }),
    );
    expect(withheldHrv.status).toBe(201);
    const withheldId: string = withheldHrv.body.data.id;
    const withRaw = await world.signed(
      key,
      'POST',
      '/sdk/v1/measurements',
      submission('alice', 70, 'good', { includeAdvanced: true, raw: { ...ppgTrace(20, 30, 70), sampleRateHz: 30 } }),
    );
    expect(withRaw.status).toBe(201);
    const rawId: string = withRaw.body.data.id;
    expect((await world.signed(key, 'GET', '/sdk/v1/users', undefined, { secret: 'wrong-secret' })).status).toBe(401);
    const stale = Math.floor(Date.now() / 1000) - 3600;
    expect((await world.signed(key, 'GET', '/sdk/v1/users', undefined, { timestamp: stale })).status).toBe(401);
    const ctx = await createContext(loadConfig({ VITALS_DATA_DIR: world.dataDir }), {
      env: {},
      batch: { embeddedWorker: false },
    });
    for (let d = 1; d <= 12; d++) {
      const at = Date.now() - d * DAY;
      const hr = 62 + ((d * 7) % 13);
      const m = {
        ...submission('alice', hr, d % 5 === 0 ? 'fair' : 'good'),
        id: `meas_e2e${String(d).padStart(20, '0')}`,
        keyId,
        requestId: `req_e2e_${d}`,
        origin: 'on_device' as const,
        attested: false,
        createdAt: at,
      };
      await insertMeasurement(ctx.db.db, m as any, null, orgId, at);
    }
    // A cloud video's measurement: no pulse clear enough, but the emotion and gaze of its face images.
    const auxId = `meas_e2ea${'0'.repeat(19)}1`;
    const auxAt = Date.now() - 2 * DAY;
    await insertMeasurement(
      ctx.db.db,
      {
        ...submission('bob', 0, 'poor'),
        source: 'cloud_video',
        id: auxId,
        keyId,
        requestId: 'cj_e2eaux',
        origin: 'cloud',
        attested: true,
        createdAt: auxAt,
        emotion: { probs: [0.001, 0.005, 0, 0.006, 0, 0.941, 0.047, 0], dominant: 'Neutral', samples: 92 },
        gaze: { meanYaw: -0.085, meanPitch: -0.204, unit: 'rad', samples: 92 },
      } as any,
      null,
      orgId,
      auxAt,
    );
    await closeContext(ctx);

    // --- Webhooks: add an endpoint at the local HTTPS receiver; its whsec_ secret is shown once.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.getByText('No endpoints yet').waitFor();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    // A URL the service may not deliver to is refused, in plain words, and the dialog stays open.
    const addDialog = page.getByRole('dialog', { name: 'Add endpoint' });
    await addDialog.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/plain-http');
    await addDialog.getByRole('button', { name: 'Add', exact: true }).click();
    await expect.poll(() => addDialog.getByRole('alert').textContent()).toContain('Some of the values are not valid');
    await shot('04a-webhooks-refused-url');
    await addDialog.getByLabel('Endpoint URL').fill(`${world.hookBase}/hooks/vitals`);
    await addDialog.getByRole('button', { name: 'Add', exact: true }).click();
    const whsecBox = page.getByLabel('Signing secret');
    await whsecBox.waitFor();
    const whsec = await whsecBox.inputValue();
    expect(whsec).toMatch(/^whsec_/);
    await shot('04-webhooks-secret-once');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    expect(await page.content()).not.toContain(whsec);

    // Send test event: the receiver gets a signed webhook.test; the journal shows it with its code.
    await page.getByRole('button', { name: 'Send test event' }).click();
    const hit = await waitFor(() => world.hits.find((h) => h.path === '/hooks/vitals'));
    const envelope = JSON.parse(hit.body.toString());
    expect(envelope.event).toBe('webhook.test');
    const canonical = await canonicalString({
      method: 'POST',
      path: '/hooks/vitals',
      timestamp: hit.headers['x-timestamp'],
      nonce: hit.headers['x-nonce'],
      body: new Uint8Array(hit.body),
    });
    expect(await hmacBase64(await sha256Hex(whsec), canonical)).toBe(hit.headers['x-signature']);
    const journalRow = page.getByRole('row', { name: new RegExp(envelope.id) });
    await expect.poll(() => journalRow.textContent(), { timeout: 15_000 }).toContain('Succeeded');
    const cells = await journalRow.getByRole('cell').allTextContents();
    expect(cells[1]).toContain('webhook.test');
    expect(cells[4].trim()).toBe('204');
    expect(cells[5]).toContain('1');
    expect(cells[6]).toMatch(/\d+ ms/);

    // A real cloud job (a 20 s frames file through the batch tier): cloud seconds and token spend
    // for the overview, and a cloud.job.completed delivery, found with the journal's event filter.
    const frames = phantomFramesFile({ durationSec: 20 });
    const up = (await world.signed(key, 'POST', '/sdk/v1/cloud/uploads/presign', { kind: 'frames' })).body.data;
    const put = await fetch(up.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': up.contentType },
      body: frames as unknown as BodyInit,
    });
    expect(put.status).toBe(200);
    const job = await world.signed(key, 'POST', '/sdk/v1/cloud/jobs', {
      objectKey: up.objectKey,
      kind: 'frames',
      sha256: sha256(frames),
      idempotencyKey: `console-e2e-${Date.now()}`,
      consent: true,
      userRef: 'carol',
    });
    expect(job.status).toBe(201);
    const completed = await waitFor(
      () =>
        world.hits
          .map((h) => JSON.parse(h.body.toString()))
          .find((e) => e.event === 'cloud.job.completed' && e.data.jobId === job.body.data.jobId),
      90_000,
    );
    await page.getByLabel('Event').selectOption('cloud.job.completed');
    const jobRow = page.getByRole('row', { name: new RegExp(completed.id) });
    await expect.poll(() => jobRow.textContent(), { timeout: 15_000 }).toContain('Succeeded');
    // (Until the filtered page arrives the previous rows stay: wait for the filtered list itself.)
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    // Redeliver: a new delivery id, the body regenerated from the job as it is now.
    await jobRow.getByRole('button', { name: 'Redeliver' }).click();
    await page.getByText(/Redelivery whd_[0-9a-f]+ queued/).waitFor();
    const again = await waitFor(() =>
      world.hits
        .map((h) => JSON.parse(h.body.toString()))
        .find((e) => e.event === 'cloud.job.completed' && e.id !== completed.id),
    );
    expect(again.data.jobId).toBe(job.body.data.jobId);
    await page.getByLabel('Event').selectOption('');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(3);
    await expect
      .poll(() => page.getByRole('row', { name: new RegExp(again.id) }).textContent(), { timeout: 15_000 })
      .toContain('Succeeded');
    await shot('05-webhooks-journal');

    // Rotate: a new whsec_ shown once; the next test event verifies with it, not the old one.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await expect.poll(async () => (await whsecBox.count()) && (await whsecBox.inputValue())).toMatch(/^whsec_/);
    const rotated = await whsecBox.inputValue();
    expect(rotated).not.toBe(whsec);
    await page.getByRole('button', { name: 'I have saved it' }).click();
    const hitsBefore = world.hits.length;
    await page.getByRole('button', { name: 'Send test event' }).click();
    const second = await waitFor(() => world.hits.slice(hitsBefore).find((h) => h.path === '/hooks/vitals'));
    const canonical2 = await canonicalString({
      method: 'POST',
      path: '/hooks/vitals',
      timestamp: second.headers['x-timestamp'],
      nonce: second.headers['x-nonce'],
      body: new Uint8Array(second.body),
    });
    expect(await hmacBase64(await sha256Hex(rotated), canonical2)).toBe(second.headers['x-signature']);
    expect(await hmacBase64(await sha256Hex(whsec), canonical2)).not.toBe(second.headers['x-signature']);

    // Delete, after a confirmation: the endpoint is gone, its deliveries stay in the journal.
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page
      .getByRole('dialog', { name: 'Delete endpoint' })
      .getByRole('button', { name: 'Delete endpoint' })
      .click();
    await page.getByText('No endpoints yet').waitFor();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(4);

    // --- Overview: this month's charts carry the data above.
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Measurements per day' }).waitFor();
    const bars = page.locator('rect.bar');
    const heights = await bars.evaluateAll((els) => els.map((e) => Number(e.getAttribute('height'))));
    expect(heights.filter((h) => h > 0).length).toBeGreaterThanOrEqual(1);
    expect(await page.getByRole('img', { name: /Quality: \d+ good, \d+ fair, \d+ poor/ }).count()).toBe(1);
    const cloudSeconds = Number(await page.getByRole('meter', { name: 'Cloud seconds' }).getAttribute('aria-valuenow'));
    expect(cloudSeconds).toBeGreaterThan(19);
    expect(cloudSeconds).toBeLessThanOrEqual(20);
    const byKey = await page.getByRole('table', { name: "This month's use by key" }).textContent();
    expect(byKey).toContain('Production backend');
    expect(byKey).toMatch(/20 s \(1 %\)/);
    const refusals = await page.getByRole('list', { name: 'Refused calls by usage-log code' }).textContent();
    expect(refusals).toContain('Signature did not match');
    expect(refusals).toContain('Clock skew over 5 minutes');
    expect(await page.getByRole('region', { name: 'Token balance' }).textContent()).toMatch(/\$2[45]\.\d\d/);
    await shot('06-overview');

    // --- Usage: the refused calls in plain words; the live tail brings a new call in.
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    await page.getByLabel('Status').selectOption('unauthorized');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(2);
    expect(await page.locator('tbody').textContent()).toContain('invalid_signature');
    await page.getByLabel('Status').selectOption('');
    // 8 measurements, 2 refusals, presign and job creation (the job's own polling is not logged).
    await expect.poll(() => page.locator('tbody tr').count()).toBe(12);
    await page.getByLabel('Live tail').check();
    await world.signed(key, 'GET', '/sdk/v1/users/alice/baseline');
    await expect.poll(() => page.locator('tbody tr').count(), { timeout: 15_000 }).toBe(13);
    expect(await page.locator('tbody tr').first().textContent()).toContain('/sdk/v1/users/alice/baseline');
    await shot('07-usage');
    await page.getByLabel('Live tail').uncheck();

    // --- End users: alice's history chart with the baseline corridor, then a measurement's raw PPG.
    await page.getByRole('link', { name: 'End users' }).click();
    await page.getByRole('link', { name: 'alice' }).click();
    await page.getByRole('heading', { name: 'User alice' }).waitFor();
    const chart = page.getByRole('img', { name: /Heart rate: 18 measurements; corridor/ });
    await chart.waitFor();
    expect(await chart.locator('circle.dot').count()).toBe(18);
    expect(await chart.locator('.corridor rect').count()).toBe(1);
    await shot('08-end-user');
    await page.goto(`${world.baseUrl}/console/measurements/${rawId}`);
    await page.getByRole('img', { name: /Raw PPG signal: 600 samples at 30 Hz/ }).waitFor();
    expect(await page.getByText('70 bpm').count()).toBeGreaterThan(0);
    await shot('09-measurement');
    // A poor measurement says why, with the service's canonical hint (not the submitted text).
    await page.goto(`${world.baseUrl}/console/measurements/${poorId}`);
    const reasons = page.getByRole('list', { name: 'Quality reasons' });
    await reasons.waitFor();
    expect(await reasons.getByRole('listitem').allTextContents()).toEqual([
      `Low light ${QUALITY_REASON_HINTS.low_light}`,
    ]);
    await shot('09b-measurement-reasons');
    // HRV and stress withheld: each absent figure says why, and the reason gives the hint.
    await page.goto(`${world.baseUrl}/console/measurements/${withheldId}`);
    await page.getByRole('list', { name: 'Quality reasons' }).waitFor();
    expect(await page.getByRole('list', { name: 'Quality reasons' }).textContent()).toContain(
      QUALITY_REASON_HINTS.hrv_withheld,
    );
    for (const name of ['HRV SDNN', 'HRV RMSSD', 'HRV pNN50', 'Stress']) {
      const dd = page.locator('dl.metrics > div', { has: page.locator('dt', { hasText: new RegExp(`^${name}$`) }) });
      expect(await dd.locator('dd').textContent()).toContain('withheld: the beats were not clean enough');
    }
    await shot('09c-measurement-hrv-withheld');
    // Emotion and gaze come from the face images: shown even where the pulse gave no vital sign.
    await page.goto(`${world.baseUrl}/console/measurements/${auxId}`);
    const auxRow = (name: string) =>
      page.locator('dl.metrics > div', { has: page.locator('dt', { hasText: new RegExp(`^${name}$`) }) }).locator('dd');
    await auxRow('Emotion').waitFor();
    expect(await auxRow('Emotion').textContent()).toBe('Neutral (94 %, 92 images)');
    expect(await auxRow('Gaze').textContent()).toBe('yaw -4.9°, pitch -11.7° (mean of 92 images)');
    expect(await auxRow('Heart rate').textContent()).toBe('—');
    await shot('09d-measurement-emotion-gaze');
    await page.getByRole('link', { name: 'End users' }).click();
    await page.getByRole('table').waitFor();
    await shot('10-end-users');

    // --- Billing: the balance, the pricing, and a pack bought through the manual provider.
    await page.getByRole('link', { name: 'Billing' }).click();
    await page.getByRole('heading', { name: 'Token packs' }).waitFor();
    const balance = async () =>
      Number(
        (await page.getByRole('region', { name: 'Token balance' }).locator('.big').textContent())!.replace(/[$,]/g, ''),
      );
    const before = await balance();
    expect(before).toBeGreaterThan(24);
    expect(before).toBeLessThan(25);
    await page.getByRole('button', { name: 'Buy the starter pack' }).click();
    await page.getByText('Pack starter bought').waitFor();
    await expect.poll(balance).toBeCloseTo(before + 10, 2);
    expect(await page.getByRole('table', { name: 'Spend by month, newest first' }).textContent()).toContain('20 s');
    await shot('11-billing');

    // --- A phone-sized window: the navigation wraps above the page, nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Measurements per day' }).waitFor();
    await shot('12-overview-phone');
    await page.setViewportSize({ width: 1280, height: 860 });

    // --- Sign out: back to the sign-in form; the API answers 401 again.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const me = await page.evaluate(async () => (await fetch('/api/v1/me')).status);
    expect(me).toBe(401);

    // --- Another organization, made by `accounts create` with a new name: unmetered, so Billing says
    // so and offers no purchase; none of Acme's data shows.
    const beta = await world.cli(
      ['accounts', 'create', '--email', 'grace@example.com', '--org', 'Beta Clinic', '--password-stdin', '--json'],
      `${PASSWORD}\n`,
    );
    expect(beta.orgId).not.toBe(orgId);
    await page.getByLabel('Email').fill('grace@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Billing' }).click();
    await page.getByRole('heading', { name: 'Token packs' }).waitFor();
    expect(await page.getByRole('region', { name: 'Token balance' }).textContent()).toContain('Unmetered');
    expect(await page.getByRole('button', { name: 'Buy the starter pack' }).isDisabled()).toBe(true);
    await shot('13-billing-unmetered');
    await page.getByRole('link', { name: 'End users' }).click();
    await page.getByText('No end users yet').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    expect(pageErrors).toEqual([]);
  },
  240_000,
);
