/**
 * Line charts: a user's heart rate over time with the baseline corridor (median ± 2·MAD, spec
 * "Baseline") drawn as a band, and the raw PPG waveform of one measurement.
 */
import { decimate, linear, niceTicks } from './scale.js';

const W = 900;
const H = 260;
const M = { top: 14, right: 16, bottom: 30, left: 44 };

export interface Point {
  t: number;
  v: number;
  /** Shown as the point's tooltip. */
  title: string;
  tone?: 'good' | 'fair' | 'poor';
}

export interface Corridor {
  low: number;
  high: number;
  median: number;
}

const dayFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });

export function HistoryChart(props: { points: Point[]; corridor?: Corridor | null; label: string; unit: string }) {
  const { points, corridor } = props;
  const vs = points.map((p) => p.v).concat(corridor ? [corridor.low, corridor.high] : []);
  const ticks = niceTicks(Math.min(...vs), Math.max(...vs), 4);
  const y = linear([ticks[0], ticks[ticks.length - 1]], [H - M.bottom, M.top]);
  const ts = points.map((p) => p.t);
  let t0 = Math.min(...ts);
  let t1 = Math.max(...ts);
  if (t0 === t1) {
    t0 -= 43_200_000;
    t1 += 43_200_000;
  }
  const x = linear([t0, t1], [M.left + 8, W - M.right - 8]);
  const xTicks = Array.from({ length: 5 }, (_, i) => t0 + ((t1 - t0) * i) / 4);
  const sorted = [...points].sort((a, b) => a.t - b.t);
  const path = sorted.map((p, i) => `${i ? 'L' : 'M'}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join('');
  const summary = corridor
    ? `${props.label}: ${points.length} measurements; corridor ${corridor.low.toFixed(0)} to ${corridor.high.toFixed(0)} ${props.unit}, median ${corridor.median.toFixed(0)}`
    : `${props.label}: ${points.length} measurements`;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary}>
        {corridor ? (
          <g class="corridor">
            <rect
              x={M.left}
              width={W - M.left - M.right}
              y={y(corridor.high)}
              height={Math.max(1, y(corridor.low) - y(corridor.high))}
            >
              <title>{`Baseline corridor ${corridor.low.toFixed(1)}–${corridor.high.toFixed(1)} ${props.unit}`}</title>
            </rect>
            <line class="median" x1={M.left} x2={W - M.right} y1={y(corridor.median)} y2={y(corridor.median)} />
          </g>
        ) : null}
        {ticks.map((t) => (
          <g key={t} class="grid">
            <line x1={M.left} x2={W - M.right} y1={y(t)} y2={y(t)} />
            <text x={M.left - 6} y={y(t) + 4} text-anchor="end">
              {t}
            </text>
          </g>
        ))}
        {xTicks.map((t, i) => (
          <text key={i} class="axis" x={x(t)} y={H - 8} text-anchor="middle">
            {dayFmt.format(t)}
          </text>
        ))}
        <path class="line" d={path} />
        {sorted.map((p, i) => (
          <circle key={i} class={`dot q-${p.tone ?? 'good'}`} cx={x(p.t)} cy={y(p.v)} r={4}>
            <title>{p.title}</title>
          </circle>
        ))}
      </svg>
      <figcaption class="legend">
        <span>
          <span class="swatch line-swatch" aria-hidden="true" /> {props.label} ({props.unit})
        </span>
        {corridor ? (
          <span>
            <span class="swatch corridor-swatch" aria-hidden="true" /> Baseline corridor, median ± 2·MAD
          </span>
        ) : null}
      </figcaption>
    </figure>
  );
}

/** The raw PPG signal against time in seconds (decimated to keep the SVG light). */
export function WaveChart(props: { values: number[]; sampleRateHz: number; label: string }) {
  const pts = decimate(props.values, 1600);
  const lo = Math.min(...props.values);
  const hi = Math.max(...props.values);
  const duration = props.values.length / (props.sampleRateHz || 1);
  const x = linear([0, props.values.length - 1], [M.left, W - M.right]);
  const y = linear([lo, hi === lo ? lo + 1 : hi], [H - M.bottom, M.top]);
  const secTicks = niceTicks(0, duration, 6).filter((s) => s <= duration);
  const d = pts.map(([i, v], k) => `${k ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join('');
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`${props.label}: ${props.values.length} samples at ${props.sampleRateHz} Hz, ${duration.toFixed(1)} s`}
      >
        {secTicks.map((s) => (
          <g key={s} class="grid">
            <line x1={x(s * props.sampleRateHz)} x2={x(s * props.sampleRateHz)} y1={M.top} y2={H - M.bottom} />
            <text class="axis" x={x(s * props.sampleRateHz)} y={H - 8} text-anchor="middle">
              {`${s} s`}
            </text>
          </g>
        ))}
        <path class="line wave" d={d} />
      </svg>
    </figure>
  );
}
