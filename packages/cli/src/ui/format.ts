/** Human-readable renderings. `--json` bypasses all of this. */
import { ABSENT_WORDS, emotionWords, gazeWords, whyAbsent } from '@vitals/protocol';
import type { CloudJob, Measurement, UsageLogRow } from '@vitals/sdk';

const fixed = (v: number | undefined | null, digits = 0): string => (typeof v === 'number' ? v.toFixed(digits) : '–');

function rows(pairs: Array<[string, string | undefined]>): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)
    .join('\n');
}

/** The quality reasons, one hint a line (docs/engine.md, "Quality reasons"); nothing when there are none. */
function formatReasons(reasons: ReadonlyArray<{ code: string; hint: string }> | undefined): string {
  if (!reasons?.length) return '';
  return `To improve the next capture:\n${reasons.map((r) => `  - ${r.hint} (${r.code})`).join('\n')}\n`;
}

/** Why HRV or stress is absent (@vitals/protocol `whyAbsent`), in the words every view uses. */
function absent(m: Measurement, metric: 'hrv' | 'stress'): string {
  const why = whyAbsent(m, metric);
  if (why === 'not_requested') return `– (${ABSENT_WORDS.not_requested}: --features hrv)`;
  return why ? `– (${ABSENT_WORDS[why]})` : '–';
}

export function formatMeasurement(m: Measurement, job?: CloudJob): string {
  const head = `Measurement ${m.id} (${m.origin}${m.attested ? ', attested' : ''})`;
  const q = m.quality;
  const pairs: Array<[string, string | undefined]> = [
    ['Quality', q ? `${q.level} (score ${fixed(q.score, 2)}${q.usable ? '' : ', not usable'})` : undefined],
  ];
  if (q?.level === 'poor') {
    pairs.push(['Metrics', 'none: the pulse was not clear enough (no vital sign is estimated from a poor capture)']);
  } else {
    const hr = m.cardiac?.heartRate;
    const br = m.respiratory?.breathingRate;
    const bp = m.bloodPressure;
    pairs.push(
      ['Heart rate', hr ? `${fixed(hr.value)} bpm (confidence ${fixed(hr.confidence, 2)})` : '–'],
      ['Breathing rate', br ? `${fixed(br.value)} brpm` : '–'],
      [
        'HRV',
        m.hrv
          ? `SDNN ${fixed(m.hrv.sdnnMs)} ms, RMSSD ${fixed(m.hrv.rmssdMs)} ms, pNN50 ${fixed(m.hrv.pnn50Pct)} %`
          : absent(m, 'hrv'),
      ],
      ['Stress', m.stress ? `${fixed(m.stress.index, 1)} (${m.stress.level})` : absent(m, 'stress')],
      [
        'Blood pressure',
        bp
          ? `${fixed(bp.systolicMmHg)}/${fixed(bp.diastolicMmHg)} mmHg (${bp.tier}, confidence ${fixed(bp.confidence, 2)})`
          : '–',
      ],
      ['SpO2', m.spo2 ? `${fixed(m.spo2.value)} % (${m.spo2.tier}, confidence ${fixed(m.spo2.confidence, 2)})` : '–'],
    );
  }
  // Shown when ordered and analysed (the spec's default orders them; `--features` may not), whatever
  // the quality: they are read from the face's images, not from the pulse.
  pairs.push(['Emotion', emotionWords(m.emotion)], ['Gaze', gazeWords(m.gaze)]);
  pairs.push(
    [
      'Duration',
      m.durationSec !== undefined
        ? `${fixed(m.durationSec, 1)} s${m.isComplete === false ? ' (incomplete)' : ''}`
        : undefined,
    ],
    ['User', m.userRef],
    [
      'Job',
      job ? `${job.jobId}${job.framesProcessed !== undefined ? ` (${job.framesProcessed} frames)` : ''}` : undefined,
    ],
  );
  return `${head}\n${rows(pairs)}\n${formatReasons(q?.reasons)}Wellness estimates, not medical values.\n`;
}

/** What each stage of a running job's `stats.progress` is doing, in a person's words. */
const STAGE_WORDS: Record<string, string> = {
  claimed: 'starting',
  reading: 'reading the frames',
  decoding: 'following the face',
  estimating: 'estimating',
  aux: 'emotion and gaze',
};

/**
 * The status line of a job being waited for: its stage while it runs, with the share of the video
 * followed so far on a terminal (a pipe gets a line per stage, not one per poll).
 */
export function formatJobStatus(j: CloudJob, terminal: boolean): string {
  let line = `job ${j.jobId}: ${j.status}`;
  const p = j.status === 'running' ? j.stats?.progress : undefined;
  if (p) {
    const words = STAGE_WORDS[p.stage] ?? p.stage;
    const share = terminal && p.stage === 'decoding' && p.fraction > 0 ? ` ${Math.floor(p.fraction * 100)} %` : '';
    line += ` (${words}${share})`;
  }
  if (j.framesProcessed) line += ` (${j.framesProcessed} frames)`;
  return line;
}

export function formatFacts(facts: Record<string, unknown>, driftMs?: number): string {
  const f = facts as {
    keyId?: string;
    status?: string;
    mode?: string;
    features?: string[];
    expiresAt?: number | null;
    limits?: { rateLimitPerMin?: number };
    quotas?: {
      quotaSecondsMonth?: number | null;
      cloudSecondsUsed?: number;
      tokenQuotaMonthUsd?: number | null;
      tokensUsedUsd?: number;
    };
    metering?: 'metered' | 'unmetered';
    tokenBalanceUsd?: number | null;
    organization?: { id?: string; name?: string } | null;
  };
  const q = f.quotas;
  const pairs: Array<[string, string | undefined]> = [
    ['Key', f.keyId],
    ['Status', f.status],
    ['Mode', f.mode],
    ['Features', f.features ? f.features.join(', ') || '(none)' : undefined],
    [
      'Organization',
      f.organization ? `${f.organization.id}${f.organization.name ? ` (${f.organization.name})` : ''}` : undefined,
    ],
    ['Expires', f.expiresAt ? new Date(f.expiresAt).toISOString() : f.expiresAt === null ? 'never' : undefined],
    ['Rate limit', f.limits ? (f.limits.rateLimitPerMin ? `${f.limits.rateLimitPerMin}/min` : 'off') : undefined],
    [
      'Cloud seconds',
      q
        ? `${fixed(q.cloudSecondsUsed, 1)} used${q.quotaSecondsMonth ? ` of ${q.quotaSecondsMonth}` : ' (no quota)'} this month`
        : undefined,
    ],
    [
      'Token spend',
      q?.tokensUsedUsd !== undefined
        ? `$${fixed(q.tokensUsedUsd, 2)} this month${q.tokenQuotaMonthUsd ? ` of $${fixed(q.tokenQuotaMonthUsd, 2)}` : ''}`
        : undefined,
    ],
    [
      'Token balance',
      // An unmetered organization has no balance to show (CLARIFICATIONS 28).
      f.metering === 'unmetered' || f.tokenBalanceUsd === null
        ? 'unmetered'
        : f.tokenBalanceUsd !== undefined
          ? `$${fixed(f.tokenBalanceUsd, 2)}`
          : undefined,
    ],
    [
      'Clock drift',
      driftMs !== undefined
        ? `${driftMs >= 0 ? '+' : ''}${(driftMs / 1000).toFixed(1)} s (server minus local)`
        : undefined,
    ],
  ];
  return `Credentials OK\n${rows(pairs)}\n`;
}

export function formatLogRow(r: UsageLogRow): string {
  const parts = [
    new Date(r.time).toISOString(),
    r.method.padEnd(4),
    r.endpoint,
    r.status,
    r.latencyMs === null ? '' : `${r.latencyMs}ms`,
    r.requestId,
  ];
  if (r.errorCode) parts.push(`[${r.errorCode}]`);
  if (r.qualityLevel) parts.push(`quality=${r.qualityLevel}`);
  return parts.filter((p) => p !== '').join('  ') + '\n';
}
