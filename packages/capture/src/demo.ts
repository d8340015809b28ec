/**
 * The demo page's script (CONTRACT.md "Demo page", CONTRACT-BROWSER "Demo backend routes"). The
 * service's demo routes play the backend with the development key; the page never sees a secret.
 * Query: `mode` (`on-device` | `cloud`, default on-device), `autostart=1`, `durationSec` (20..180,
 * default 30); `keepFrames=1` also keeps the capture's frames file on the element (tests).
 * At the end: `vitals:result` on `document` with the stored measurement exactly as
 * `GET /sdk/v1/measurements/{id}` returns it; a failure: `vitals:error` with `{ code, message }`.
 */
import type { ModelGrant } from './bundle.js';
import { defineVitalsMeasure, type MeasureResultDetail, type VitalsMeasureElement } from './element.js';
import type { OnDeviceResult } from './result.js';
import type { ShownMeasurement } from './result-view.js';

interface Envelope<T> {
  ok: boolean;
  data?: T;
  error?: { code: string; message: string };
}

class DemoApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function api<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch (err) {
    throw new DemoApiError('network_error', `The service could not be reached: ${String(err)}`);
  }
  const env = (await res.json().catch(() => null)) as Envelope<T> | null;
  if (!res.ok || !env?.ok || env.data === undefined)
    throw new DemoApiError(env?.error?.code ?? 'internal_error', env?.error?.message ?? `HTTP ${res.status}`);
  return env.data;
}

function params(): { mode: 'on-device' | 'cloud'; autostart: boolean; durationSec: number; keepFrames: boolean } {
  const q = new URLSearchParams(location.search);
  const d = Number(q.get('durationSec') ?? 30);
  return {
    mode: q.get('mode') === 'cloud' ? 'cloud' : 'on-device',
    autostart: q.get('autostart') === '1',
    durationSec: Number.isFinite(d) ? Math.min(180, Math.max(20, Math.round(d))) : 30,
    keepFrames: q.get('keepFrames') === '1',
  };
}

function main(): void {
  defineVitalsMeasure();
  const p = params();
  const el = document.createElement('vitals-measure') as VitalsMeasureElement;
  el.setAttribute('mode', p.mode);
  el.setAttribute('duration-sec', String(p.durationSec));
  if (p.keepFrames) el.setAttribute('keep-frames', '');
  el.grantProvider = () => api<ModelGrant>('POST', '/demo/api/grant', {});
  el.sessionProvider = (durationSec) => api('POST', '/demo/api/session', { durationSec });
  el.submitResult = (result: OnDeviceResult) => api<ShownMeasurement>('POST', '/demo/api/measurements', result);
  el.addEventListener('vitals-measure:result', (e) => {
    const { measurement, outcome } = (e as CustomEvent<MeasureResultDetail>).detail;
    // Cloud: the stored measurement as GET returns it (the `final` event's may carry less).
    const stored = outcome.final
      ? api<ShownMeasurement>('GET', `/demo/api/measurements/${encodeURIComponent(outcome.final.measurementId)}`)
      : Promise.resolve(measurement);
    stored.then(
      (detail) => document.dispatchEvent(new CustomEvent('vitals:result', { detail })),
      (err: DemoApiError) => fail(err.code ?? 'internal_error', err.message),
    );
  });
  el.addEventListener('vitals-measure:error', (e) => {
    const { code, message } = (e as CustomEvent<{ code: string; message: string }>).detail;
    fail(code, message);
  });
  for (const a of document.querySelectorAll<HTMLAnchorElement>('a[data-mode]')) {
    const u = new URL(location.href);
    u.searchParams.set('mode', a.dataset.mode!);
    u.searchParams.delete('autostart');
    a.href = u.pathname + u.search;
    if (a.dataset.mode === p.mode) a.setAttribute('aria-current', 'page');
  }
  document.querySelector('main')!.append(el);
  if (p.autostart) void el.start();
}

function fail(code: string, message: string): void {
  document.dispatchEvent(new CustomEvent('vitals:error', { detail: { code, message } }));
}

main();
