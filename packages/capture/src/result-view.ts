/**
 * The result as people read it: every metric of the stored measurement (or the on-device body),
 * its quality, and the wellness disclaimer. Plain DOM, no innerHTML with data (XSS-safe).
 */
import { ABSENT_WORDS, whyAbsent } from '@vitals/protocol';

/** The measurement fields shown (the stored measurement and the submission body share them). */
export interface ShownMeasurement {
  id?: string;
  origin?: string;
  durationSec?: number;
  quality?: { level: string; score: number; usable: boolean; reasons?: { code: string; hint: string }[] };
  cardiac?: { heartRate: { value: number; unit: string; confidence?: number } | null };
  hrv?: { sdnnMs: number; rmssdMs: number; pnn50Pct: number } | null;
  respiratory?: { breathingRate: { value: number; unit: string } | null };
  stress?: { index: number; level: string } | null;
  bloodPressure?: { systolicMmHg: number; diastolicMmHg: number; tier?: string } | null;
  spo2?: { value: number; tier?: string } | null;
}

export const DISCLAIMER =
  'For general wellness only. This is not a medical device and does not diagnose, treat or prevent any condition. ' +
  'If you feel unwell, contact a healthcare professional.';

const QUALITY_WORDS: Record<string, string> = {
  good: 'Good signal',
  fair: 'Fair signal: treat the figures as approximate',
  poor: 'Poor signal: no figures could be given. Try again facing a light, and hold still.',
};

const n = (v: number, d = 0): string => v.toFixed(d);

const NOT_AVAILABLE = 'not available';

/** A row: the figure's name, its text, and `true` when the figure is absent (a lighter style). */
export type MetricRow = [name: string, text: string, absent?: true];

const shown = (name: string, text: string | null, ifAbsent = NOT_AVAILABLE): MetricRow =>
  text === null ? [name, ifAbsent, true] : [name, text];

/** What an absent HRV or stress figure means (@vitals/protocol `whyAbsent`). */
function absent(m: ShownMeasurement, metric: 'hrv' | 'stress'): string {
  const why = whyAbsent(m, metric);
  return why ? ABSENT_WORDS[why] : NOT_AVAILABLE;
}

export function metricRows(m: ShownMeasurement): MetricRow[] {
  const hr = m.cardiac?.heartRate;
  const br = m.respiratory?.breathingRate;
  const bp = m.bloodPressure;
  return [
    shown('Heart rate', hr ? `${n(hr.value)} bpm` : null),
    shown(
      'Heart rate variability',
      m.hrv ? `SDNN ${n(m.hrv.sdnnMs)} ms, RMSSD ${n(m.hrv.rmssdMs)} ms, pNN50 ${n(m.hrv.pnn50Pct)} %` : null,
      absent(m, 'hrv'),
    ),
    shown('Breathing rate', br ? `${n(br.value)} breaths/min` : null),
    shown('Stress', m.stress ? `${m.stress.level} (index ${n(m.stress.index)})` : null, absent(m, 'stress')),
    shown('Blood pressure (beta)', bp ? `${n(bp.systolicMmHg)}/${n(bp.diastolicMmHg)} mmHg` : null),
    shown('SpO2 (beta)', m.spo2 ? `${n(m.spo2.value)} %` : null),
  ];
}

export function renderResult(root: HTMLElement, m: ShownMeasurement): void {
  root.replaceChildren();
  const h = document.createElement('h3');
  h.textContent = 'Your result';
  const q = document.createElement('p');
  q.className = `quality quality-${m.quality?.level ?? 'poor'}`;
  const level = m.quality?.level ?? 'poor';
  q.textContent = `Quality: ${QUALITY_WORDS[level] ?? level}${m.quality ? ` (score ${n(m.quality.score, 2)})` : ''}`;
  // The quality reasons' hints (docs/engine.md, "Quality reasons"): what to change next time.
  const tips = document.createElement('ul');
  tips.className = 'reasons';
  for (const r of m.quality?.reasons ?? []) {
    const li = document.createElement('li');
    li.dataset.code = r.code;
    li.textContent = r.hint;
    tips.append(li);
  }
  const dl = document.createElement('dl');
  for (const [k, v, isAbsent] of metricRows(m)) {
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = v;
    if (isAbsent) dd.className = 'absent';
    dl.append(dt, dd);
  }
  const meta = document.createElement('p');
  meta.className = 'meta';
  meta.textContent = [
    m.durationSec ? `${n(m.durationSec)} s measured` : '',
    m.origin === 'cloud' ? 'computed by the service' : m.origin === 'on_device' ? 'computed on this device' : '',
    m.id ? `id ${m.id}` : '',
  ]
    .filter(Boolean)
    .join(' · ');
  const disc = document.createElement('p');
  disc.className = 'disclaimer';
  disc.textContent = DISCLAIMER;
  root.append(h, q, ...(tips.childElementCount ? [tips] : []), dl, meta, disc);
}
