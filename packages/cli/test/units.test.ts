/** Pure parts of the CLI, in-process: the exit-code table, the idempotency key, --since, docs in step. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS, QUALITY_REASON_HINTS } from '@vitals/protocol';
import type { CloudJob, Measurement } from '@vitals/sdk';
import { EXIT_CODES, exitCodeFor, idempotencyKeyFor, loadConfig, parseSince, runCli } from '@vitals/cli';
import { formatJobStatus, formatMeasurement } from '../src/ui/format.js';

describe('exit-code table', () => {
  it('maps every API error code of the protocol table: 401s and key_disabled 3, 429 7, service failures 1, other refusals 4', () => {
    for (const [code, status] of Object.entries(ERROR_STATUS)) {
      const exit = exitCodeFor(code, { fromApi: true });
      if (status === 401 || code === 'key_disabled') expect(exit, code).toBe(3);
      else if (status === 429) expect(exit, code).toBe(7);
      else if (code === 'internal_error' || code === 'service_unavailable') expect(exit, code).toBe(1);
      else expect(exit, code).toBe(4);
    }
  });

  it('local outcomes', () => {
    expect(exitCodeFor('usage_error')).toBe(2);
    expect(exitCodeFor('config_error')).toBe(2);
    expect(exitCodeFor('bad_file')).toBe(2);
    expect(exitCodeFor('job_not_completed')).toBe(5);
    expect(exitCodeFor('wait_timeout')).toBe(6);
    expect(exitCodeFor('network_error')).toBe(1);
    expect(exitCodeFor('something_new')).toBe(1);
    expect(exitCodeFor('something_new', { fromApi: true })).toBe(4);
  });

  it('docs/cli.md lists the same exit codes', () => {
    const doc = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8');
    for (const code of Object.values(EXIT_CODES))
      expect(doc, `exit ${code}`).toMatch(new RegExp(`^\\| ${code} +\\|`, 'm'));
  });
});

describe('idempotency key', () => {
  const sha = 'a'.repeat(64);
  it('is stable for the same file and options, 16-200 chars, and changes with the options', async () => {
    const k1 = await idempotencyKeyFor(sha, { features: ['bp', 'hrv'] });
    expect(k1).toBe(await idempotencyKeyFor(sha, { features: ['bp', 'hrv'] }));
    expect(k1).toMatch(/^cli-a{64}-[0-9a-f]{12}$/);
    expect(k1.length).toBeGreaterThanOrEqual(16);
    expect(k1.length).toBeLessThanOrEqual(200);
    expect(await idempotencyKeyFor(sha, { features: ['hrv'] })).not.toBe(k1);
    expect(await idempotencyKeyFor(sha, { features: ['bp', 'hrv'], userRef: 'u1' })).not.toBe(k1);
  });
});

describe('--since', () => {
  const now = Date.UTC(2026, 0, 2);
  it.each([
    ['15m', now - 15 * 60_000],
    ['2h', now - 7_200_000],
    ['1d', now - 86_400_000],
    ['1767225600000', 1767225600000],
    ['2026-01-01T00:00:00Z', Date.UTC(2026, 0, 1)],
  ])('%s', (text, want) => expect(parseSince(text, now)).toBe(want));
});

describe('config', () => {
  it('defaults the base address and refuses a non-http one', () => {
    expect(loadConfig({ VITALS_KEY_ID: 'k', VITALS_KEY_SECRET: 's' }).baseUrl).toBe('http://127.0.0.1:8787');
    expect(() => loadConfig({ VITALS_KEY_ID: 'k', VITALS_KEY_SECRET: 's', VITALS_BASE_URL: 'ftp://x' })).toThrow(
      /VITALS_BASE_URL/,
    );
  });
});

describe('runCli in-process', () => {
  it('returns 2 and writes to the injected stderr when credentials are missing', async () => {
    let err = '';
    const code = await runCli(['auth', 'test'], {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (err += s) },
      env: {},
    });
    expect(code).toBe(2);
    expect(err).toMatch(/missing credentials/);
  });
});

/** A stored measurement for the summary's tests: a published heart rate, HRV and stress absent. */
const measurement = (o: object): Measurement =>
  ({
    id: 'meas_1',
    origin: 'cloud',
    attested: true,
    durationSec: 60,
    quality: { level: 'good', score: 0.8, usable: true, reasons: [] },
    cardiac: { heartRate: { value: 66, unit: 'bpm', confidence: 0.9 } },
    hrv: null,
    stress: null,
    ...o,
  }) as unknown as Measurement;

/** The summary's line for `name`, if any. */
const summaryLine = (text: string, name: string): string | undefined =>
  text.split('\n').find((l) => l.trimStart().startsWith(`${name} `));

describe('the measurement summary: absent HRV and stress', () => {
  const m = measurement;
  const line = (text: string, name: string) => summaryLine(text, name) ?? '';

  it('says the beats were not clean enough when the engine withheld them (hrv_withheld)', () => {
    const reasons = [{ code: 'hrv_withheld', hint: QUALITY_REASON_HINTS.hrv_withheld }];
    const text = formatMeasurement(m({ quality: { level: 'good', score: 0.8, usable: true, reasons } }));
    expect(line(text, 'HRV')).toContain('withheld: the beats were not clean enough');
    expect(line(text, 'Stress')).toContain('withheld: the beats were not clean enough');
    expect(text).toContain(`${QUALITY_REASON_HINTS.hrv_withheld} (hrv_withheld)`);
  });

  it('says HRV was not requested when stress (always computed) was published without it', () => {
    const text = formatMeasurement(m({ stress: { index: 90, level: 'low', unit: 'index' } }));
    expect(line(text, 'HRV')).toContain('not requested');
    expect(line(text, 'Stress')).toContain('90.0 (low)');
  });
});

describe('the measurement summary: emotion and gaze', () => {
  const m = measurement;
  const line = summaryLine;

  it('names the dominant class with its mean share, and the mean gaze in degrees', () => {
    const text = formatMeasurement(
      m({
        emotion: { probs: [0.02, 0, 0, 0.06, 0, 0.67, 0.25, 0], dominant: 'Neutral', samples: 104 },
        gaze: { meanYaw: -0.007, meanPitch: 0.023, unit: 'rad', samples: 103 },
      }),
    );
    expect(line(text, 'Emotion')).toMatch(/Neutral \(67 %, 104 images\)$/);
    expect(line(text, 'Gaze')).toMatch(/yaw -0\.4°, pitch 1\.3° \(mean of 103 images\)$/);
  });

  it('shows them on a poor capture too: they come from the face images, not the pulse', () => {
    const text = formatMeasurement(
      m({
        quality: { level: 'poor', score: 0.18, usable: false },
        cardiac: { heartRate: null },
        emotion: { probs: [0, 0, 0, 0.06, 0, 0.94, 0, 0], dominant: 'Neutral', samples: 92 },
        gaze: { meanYaw: -0.085, meanPitch: -0.204, unit: 'rad', samples: 92 },
      }),
    );
    expect(line(text, 'Metrics')).toContain('none');
    expect(line(text, 'Heart rate')).toBeUndefined();
    expect(line(text, 'Emotion')).toMatch(/Neutral \(94 %, 92 images\)$/);
    expect(line(text, 'Gaze')).toMatch(/yaw -4\.9°, pitch -11\.7° \(mean of 92 images\)$/);
  });

  it('leaves them out when they were not ordered or nothing was analysed (null)', () => {
    for (const text of [formatMeasurement(m({})), formatMeasurement(m({ emotion: null, gaze: null }))]) {
      expect(line(text, 'Emotion')).toBeUndefined();
      expect(line(text, 'Gaze')).toBeUndefined();
    }
  });
});

describe('the status line of a job being waited for', () => {
  const job = (over: Partial<CloudJob>): CloudJob =>
    ({
      jobId: 'cj_1',
      mode: 'batch_video',
      status: 'running',
      createdAt: 0,
      framesProcessed: 0,
      secondsProcessed: 0,
      ...over,
    }) as CloudJob;

  it('names the running stage, with the share of the video followed on a terminal only', () => {
    const decoding = job({ stats: { progress: { stage: 'decoding', fraction: 0.437 } } });
    expect(formatJobStatus(decoding, true)).toBe('job cj_1: running (following the face 43 %)');
    // A pipe gets one line per stage (the spinner prints a plain line when the text changes).
    expect(formatJobStatus(decoding, false)).toBe('job cj_1: running (following the face)');
    expect(formatJobStatus(job({ stats: { progress: { stage: 'aux', fraction: 0.95 } } }), true)).toBe(
      'job cj_1: running (emotion and gaze)',
    );
    // A stage this CLI does not know (a newer server) is shown as named.
    expect(formatJobStatus(job({ stats: { progress: { stage: 'resampling', fraction: 0.5 } } }), true)).toBe(
      'job cj_1: running (resampling)',
    );
  });

  it('no progress before the job runs, and the frames once settled', () => {
    expect(formatJobStatus(job({ status: 'queued' }), true)).toBe('job cj_1: queued');
    expect(formatJobStatus(job({ status: 'completed', framesProcessed: 1537, stats: {} }), true)).toBe(
      'job cj_1: completed (1537 frames)',
    );
  });
});
