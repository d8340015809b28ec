/**
 * `<vitals-measure>`: the framework-free drop-in (issue 15 §3). Camera preview with a face guide,
 * progress, live heart rate (and on the device the live pulse waveform), hints in plain words, the
 * result with every metric, its quality and the wellness disclaimer. The host page supplies the
 * backend calls (its backend holds the key): `grantProvider`, and `sessionProvider` (cloud) or
 * `submitResult` (on the device).
 *
 * Attributes: `mode` (`on-device` | `cloud`), `duration-sec` (20..180, default 30), `autostart`,
 * `delivery` (cloud: `auto` | `stream` | `batch`), `keep-frames`.
 * Events (bubbling, composed): `vitals-measure:result` `{ measurement, outcome }`,
 * `vitals-measure:error` `{ code, message }`, `vitals-measure:guidance`, `vitals-measure:hr`.
 */
import { StreamSession, type Delivery, type SessionInfo } from '@vitals/sdk';
import type { ModelGrant } from './bundle.js';
import { CAMERA_MESSAGES, CameraError } from './camera.js';
import { VitalsCapture, type CaptureMode, type CaptureOutcome } from './capture.js';
import { ELEMENT_CSS } from './element-style.js';
import { renderResult, type ShownMeasurement } from './result-view.js';
import type { OnDeviceResult } from './result.js';
import { WaveView } from './wave-view.js';

const TEMPLATE = `
<div class="stage">
  <video muted playsinline autoplay aria-label="Camera preview"></video>
  <svg class="guide" viewBox="0 0 400 300" aria-hidden="true">
    <ellipse cx="200" cy="140" rx="78" ry="104"></ellipse>
    <circle class="ring-bg" cx="370" cy="30" r="18"></circle>
    <circle class="ring" cx="370" cy="30" r="18" pathLength="100" stroke-dasharray="100" stroke-dashoffset="100"></circle>
  </svg>
  <div class="hint" role="status" aria-live="assertive"></div>
  <div class="hud"><div class="hr" aria-hidden="true">--<small>bpm</small></div><canvas class="wave" width="240" height="56" aria-hidden="true"></canvas></div>
</div>
<div class="bar" role="progressbar" aria-label="Measurement progress" aria-valuemin="0" aria-valuemax="100" aria-valuenow="0"><div></div></div>
<div class="status" aria-live="polite"></div>
<div class="sr" aria-live="polite" data-reading></div>
<div class="controls"><button class="primary" data-start type="button">Start measuring</button><button data-cancel type="button" hidden>Cancel</button></div>
<div class="error" role="alert"></div>
<section class="result" aria-live="polite" aria-label="Result"></section>`;

export interface MeasureResultDetail {
  measurement: ShownMeasurement;
  outcome: CaptureOutcome;
}

export class VitalsMeasureElement extends HTMLElement {
  grantProvider?: () => Promise<ModelGrant>;
  sessionProvider?: (
    durationSec: number,
  ) => Promise<Pick<SessionInfo, 'sessionToken' | 'wsUrl'> & Partial<SessionInfo>>;
  submitResult?: (result: OnDeviceResult) => Promise<ShownMeasurement>;
  /** The last capture's outcome (its frames file with `keep-frames`). */
  lastOutcome?: CaptureOutcome;

  private readonly root = this.attachShadow({ mode: 'open' });
  private capture: VitalsCapture | null = null;
  private abort: AbortController | null = null;
  private wave: WaveView | null = null;
  private lastSpoken = 0;

  constructor() {
    super();
    this.root.innerHTML = `<style>${ELEMENT_CSS}</style>${TEMPLATE}`;
  }

  get mode(): CaptureMode {
    return this.getAttribute('mode') === 'cloud' ? 'cloud' : 'on-device';
  }
  get durationSec(): number {
    const v = Number(this.getAttribute('duration-sec') ?? 30);
    return Number.isFinite(v) ? Math.min(180, Math.max(20, Math.round(v))) : 30;
  }

  connectedCallback(): void {
    this.$('[data-start]').addEventListener('click', () => void this.start());
    this.$('[data-cancel]').addEventListener('click', () => this.abort?.abort(new Error('cancelled')));
    this.wave = new WaveView(this.$('canvas.wave') as HTMLCanvasElement);
    this.$('canvas.wave').hidden = this.mode !== 'on-device';
    this.setStatus(this.mode === 'cloud' ? 'Measured by the service.' : 'Measured on this device.');
    if (this.hasAttribute('autostart')) queueMicrotask(() => void this.start());
  }

  disconnectedCallback(): void {
    this.abort?.abort(new Error('removed'));
    this.capture?.close();
    this.capture = null;
  }

  /** Opens the camera (if needed) and measures once. */
  async start(): Promise<void> {
    if (this.abort) return;
    const mode = this.mode;
    const durationSec = this.durationSec;
    this.abort = new AbortController();
    const signal = this.abort.signal;
    this.$('.error').textContent = '';
    this.$('.result').replaceChildren();
    this.$('[data-start]').hidden = true;
    this.$('[data-cancel]').hidden = false;
    this.dataset.face = '';
    this.$('.hr').firstChild!.textContent = '--';
    try {
      if (!this.grantProvider) throw Object.assign(new Error('No grant provider is set.'), { code: 'not_configured' });
      this.setStatus('Starting the camera and loading the face models…');
      this.capture ??= this.createCapture();
      await this.capture.prepare(mode);
      let session: StreamSession | undefined;
      if (mode === 'cloud') {
        if (!this.sessionProvider)
          throw Object.assign(new Error('No session provider is set.'), { code: 'not_configured' });
        const delivery = (this.getAttribute('delivery') ?? 'auto') as Delivery;
        session = new StreamSession({ session: await this.sessionProvider(durationSec), delivery });
      }
      // The live rate is shown only where the stored result would publish one (docs/engine.md,
      // Streaming estimator), so it can take a while, or not come at all on a weak signal.
      this.setStatus(
        'Measuring. Keep your face in the oval and stay still: the heart rate shows once the pulse is clear.',
      );
      const outcome = await this.capture.run({
        mode,
        durationSec,
        session,
        keepFramesFile: this.hasAttribute('keep-frames'),
        signal,
      });
      this.lastOutcome = outcome;
      this.setStatus('Computing the result…');
      let shown: ShownMeasurement;
      if (outcome.final) shown = outcome.final.measurement as ShownMeasurement;
      else if (this.submitResult) shown = await this.submitResult(outcome.result!);
      else shown = outcome.result as ShownMeasurement;
      renderResult(this.$('.result'), shown);
      // The live reading gives way to the result's own (none for a poor capture).
      const final = shown.cardiac?.heartRate?.value;
      this.$('.hr').firstChild!.textContent = final === undefined ? '--' : String(Math.round(final));
      this.setStatus('Done.');
      this.emitEvent('vitals-measure:result', { measurement: shown, outcome } satisfies MeasureResultDetail);
    } catch (err) {
      const code = errorCode(err, signal);
      const message = code in CAMERA_MESSAGES ? CAMERA_MESSAGES[code as keyof typeof CAMERA_MESSAGES] : messageOf(err);
      this.$('.error').textContent = message;
      this.setStatus(code === 'cancelled' ? 'Cancelled.' : 'The measurement did not complete.');
      this.emitEvent('vitals-measure:error', { code, message });
    } finally {
      this.abort = null;
      this.$('[data-start]').hidden = false;
      this.$('[data-start]').textContent = 'Measure again';
      this.$('[data-cancel]').hidden = true;
      this.$('.hint').textContent = '';
    }
  }

  private createCapture(): VitalsCapture {
    const c = new VitalsCapture({
      video: this.$('video') as HTMLVideoElement,
      grant: () => this.grantProvider!(),
      workerUrl: new URL('./estimator-worker.js', import.meta.url),
      trackerWorkerUrl: new URL('./tracker-worker.js', import.meta.url),
    });
    const ring = this.$('.ring');
    const bar = this.$('.bar');
    c.on('progress', (p) => {
      const pct = Math.round(p.fraction * 100);
      ring.setAttribute('stroke-dashoffset', String(100 - pct));
      (bar.firstElementChild as HTMLElement).style.width = `${pct}%`;
      bar.setAttribute('aria-valuenow', String(pct));
    });
    c.on('guidance', (g) => {
      this.$('.hint').textContent = g.message ?? '';
      // The guide turns green on face crops (below) and back when the face is lost or unseeable.
      if (g.active.includes('no_face') || g.active.includes('too_dark')) this.dataset.face = '';
      this.emitEvent('vitals-measure:guidance', g);
    });
    c.on('packet', (p) => {
      if (p.type === 1 && this.dataset.face !== 'ok') this.dataset.face = 'ok';
    });
    c.on('hr', (e) => {
      const bpm = Math.round(e.hr);
      this.$('.hr').firstChild!.textContent = String(bpm);
      this.emitEvent('vitals-measure:hr', e);
      // Screen readers hear the reading every 10 s, not every second.
      if (e.tMs - this.lastSpoken >= 10_000) {
        this.lastSpoken = e.tMs;
        this.$('[data-reading]').textContent = `Heart rate ${bpm} beats per minute`;
      }
    });
    c.on('wave', (w) => this.wave?.push(w));
    return c;
  }

  private $(sel: string): HTMLElement {
    return this.root.querySelector(sel) as HTMLElement;
  }
  private setStatus(s: string): void {
    this.$('.status').textContent = s;
  }
  private emitEvent(type: string, detail: unknown): void {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }
}

function errorCode(err: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'cancelled';
  if (err instanceof CameraError) return err.code;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[a-z][a-z0-9_]*$/.test(code) ? code : 'capture_failed';
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Registers `<vitals-measure>` once. */
export function defineVitalsMeasure(name = 'vitals-measure'): void {
  if (!customElements.get(name)) customElements.define(name, VitalsMeasureElement);
}
