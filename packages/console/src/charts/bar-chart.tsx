/** Vertical bars over categories (measurements per day): SVG, scaled by viewBox, one title per bar. */
import { linear, niceTicks } from './scale.js';

export interface Bar {
  label: string;
  value: number;
  /** Axis text under the bar; empty to skip (crowded axes show every nth label). */
  tick?: string;
}

const W = 900;
const H = 240;
const M = { top: 12, right: 12, bottom: 28, left: 40 };

export function BarChart(props: { bars: Bar[]; label: string; unit: string }) {
  const { bars } = props;
  const max = Math.max(1, ...bars.map((b) => b.value));
  const ticks = niceTicks(0, max, 4, true);
  const y = linear([0, ticks[ticks.length - 1]], [H - M.bottom, M.top]);
  const slot = (W - M.left - M.right) / Math.max(1, bars.length);
  const bw = Math.max(2, slot * 0.7);
  const total = bars.reduce((s, b) => s + b.value, 0);
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${props.label}: ${total} ${props.unit} in all`}>
        {ticks.map((t) => (
          <g key={t} class="grid">
            <line x1={M.left} x2={W - M.right} y1={y(t)} y2={y(t)} />
            <text x={M.left - 6} y={y(t) + 4} text-anchor="end">
              {t}
            </text>
          </g>
        ))}
        {bars.map((b, i) => {
          const x = M.left + i * slot + (slot - bw) / 2;
          const top = y(b.value);
          return (
            <g key={b.label}>
              <rect class="bar" x={x} y={top} width={bw} height={Math.max(0, H - M.bottom - top)} rx={2}>
                <title>{`${b.label}: ${b.value} ${props.unit}`}</title>
              </rect>
              {b.tick ? (
                <text class="axis" x={x + bw / 2} y={H - 8} text-anchor="middle">
                  {b.tick}
                </text>
              ) : null}
            </g>
          );
        })}
        <line class="axis-line" x1={M.left} x2={W - M.right} y1={H - M.bottom} y2={H - M.bottom} />
      </svg>
    </figure>
  );
}

/** Horizontal bars with a text label each (refusals by code): readable at any count of rows. */
export function HBarChart(props: { rows: Array<{ label: string; code?: string; value: number }>; label: string }) {
  const max = Math.max(1, ...props.rows.map((r) => r.value));
  return (
    <figure class="chart">
      <ul class="hbars" aria-label={props.label}>
        {props.rows.map((r) => (
          <li key={r.label} class="hbar-row">
            <span class="hbar-label">
              {r.label}
              {r.code ? <code class="code">{r.code}</code> : null}
            </span>
            <svg class="hbar-track" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">
              <rect class="hbar" x={0} y={0} height={10} width={(r.value / max) * 100} rx={1} />
            </svg>
            <span class="hbar-value">{r.value}</span>
          </li>
        ))}
      </ul>
    </figure>
  );
}
