// Peer fixtures (vitallens-core tests/fixtures): our waveform → vitals stage on the peer's PPG and
// respiratory waveforms against the peer's expected values and tolerances.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { waveformToVitals } from '../../packages/engine/src/index.js';
import { DATA_DIR, fmt, table } from './common.js';
import { splitSection, type HeadlineRow, type SectionOutput } from '../headline.js';

interface Fixture {
  fps: number;
  waveforms: {
    ppg_waveform: { data: number[]; confidence?: number[] };
    respiratory_waveform?: { data: number[] };
  };
  vitals: Record<string, { value: number }>;
}

/** The peer's own test tolerances (MANIFEST: HR and RR ±3/min, SDNN/RMSSD ±5 ms, pNN50 ±5 points, stress ±20). */
const CHECKS = [
  { key: 'heart_rate', label: 'HR (bpm)', tol: 3 },
  { key: 'respiratory_rate', label: 'BR (/min)', tol: 3 },
  { key: 'hrv_sdnn', label: 'SDNN (ms)', tol: 5 },
  { key: 'hrv_rmssd', label: 'RMSSD (ms)', tol: 5 },
  { key: 'hrv_pnn50', label: 'pNN50 (%)', tol: 5 },
  { key: 'stress_index', label: 'Stress index', tol: 20 },
] as const;

export function evaluateFixture(f: Fixture): Record<string, number | null> {
  const v = waveformToVitals(f.waveforms.ppg_waveform.data, f.fps, {
    respiratoryWaveform: f.waveforms.respiratory_waveform?.data,
    confidence: f.waveforms.ppg_waveform.confidence,
  });
  return {
    heart_rate: v.heartRate?.value ?? null,
    respiratory_rate: v.breathingRate?.value ?? null,
    hrv_sdnn: v.hrv?.sdnnMs ?? null,
    hrv_rmssd: v.hrv?.rmssdMs ?? null,
    hrv_pnn50: v.hrv?.pnn50Pct ?? null,
    stress_index: v.stress?.index ?? null,
  };
}

export async function run(): Promise<SectionOutput> {
  const dir = join(DATA_DIR, 'peer-fixtures/vitallens-core');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  const rows: string[][] = [];
  const tally = new Map<string, { pass: number; total: number }>();
  for (const file of files) {
    const f = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Fixture;
    const ours = evaluateFixture(f);
    for (const c of CHECKS) {
      const expected = f.vitals[c.key]?.value;
      if (expected === undefined) continue;
      const got = ours[c.key];
      const ok = got !== null && Math.abs(got - expected) <= c.tol;
      const t = tally.get(c.label) ?? { pass: 0, total: 0 };
      t.total++;
      if (ok) t.pass++;
      tally.set(c.label, t);
      rows.push([
        file.replace('.json', ''),
        c.label,
        fmt(expected, 2),
        fmt(got, 2),
        got === null ? '–' : fmt(got - expected, 2),
        `±${c.tol}`,
        ok ? 'pass' : '**fail**',
      ]);
    }
  }
  const summary = table(
    ['metric', 'within tolerance', 'required'],
    [...tally].map(([k, t]) => [k, `${t.pass}/${t.total}`, k === 'Stress index' ? 'informative' : 'all']),
  );
  const required = [...tally].filter(([k]) => k !== 'Stress index');
  const pass = required.reduce((a, [, t]) => a + t.pass, 0);
  const total = required.reduce((a, [, t]) => a + t.total, 0);
  const headline: HeadlineRow[] = [
    {
      area: 'Peer fixtures (vitallens-core)',
      figure: `waveform → vitals within the peer's tolerances (${required.map(([k]) => k.replace(/ \(.*\)$/, '')).join(', ')})`,
      value: `${pass}/${total}`,
      target: 'all',
      met: pass === total,
      reference: "the peer's own expected values and tolerances",
      command: '`npm run eval`',
    },
  ];
  const markdown = [
    '## Peer fixtures: waveform → vitals (vitallens-core)',
    '',
    "Input: the peer's PPG waveform with its per-sample confidence (and its respiratory waveform for breathing rate) at the fixture's fps, through `waveformToVitals`. The peer's HRV references come from its own beats on that waveform (peaks placed on the waveform itself, intervals only between beats of confidence ≥ 0.5, 300–2000 ms, ≤ 25 % from the last accepted interval, NeuroKit2 time-domain metrics); ours follow the same definition (docs/engine.md, stage 5). Expected values and tolerances are the peer's own. The stress index is compared for information only (the peer marks it as manual ground truth and our histogram details may differ).",
    '',
    summary,
    '',
    table(['fixture', 'metric', 'expected', 'ours', 'error', 'tolerance', 'result'], rows),
  ].join('\n');
  return { markdown, headline };
}

// `npx tsx scripts/eval/peer-fixtures.ts` prints this section alone (no video decoding).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  console.log(splitSection(await run()).markdown);
