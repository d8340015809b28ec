/** Use against a cap (cloud seconds, token spend): a bar that turns amber at 80 % and red at 100 %. */
import type { ComponentChildren } from 'preact';

export function Meter(props: {
  label: string;
  used: number;
  cap: number | null;
  format: (v: number) => string;
  children?: ComponentChildren;
}) {
  const { used, cap } = props;
  const ratio = cap && cap > 0 ? used / cap : 0;
  const tone = ratio >= 1 ? 'bad' : ratio >= 0.8 ? 'warn' : 'good';
  const text = cap === null ? `${props.format(used)} used, no cap` : `${props.format(used)} of ${props.format(cap)}`;
  return (
    <div class="meter">
      <div class="meter-head">
        <span class="meter-label">{props.label}</span>
        <span class="meter-value">{props.format(used)}</span>
      </div>
      <svg
        class="meter-track"
        viewBox="0 0 100 8"
        preserveAspectRatio="none"
        role="meter"
        aria-label={props.label}
        aria-valuemin={0}
        aria-valuemax={cap ?? undefined}
        aria-valuenow={used}
        aria-valuetext={text}
      >
        <rect class="meter-bg" x={0} y={0} width={100} height={8} rx={4} />
        {cap !== null ? (
          <rect class={`meter-fill meter-${tone}`} x={0} y={0} width={Math.min(1, ratio) * 100} height={8} rx={4} />
        ) : null}
      </svg>
      <div class="meter-foot">
        {cap === null ? 'No monthly cap set' : `${Math.round(ratio * 100)} % of ${props.format(cap)}`}
        {props.children}
      </div>
    </div>
  );
}

/** The quality mix as one stacked bar with a legend (counts and shares). */
export function QualityMix(props: { good: number; fair: number; poor: number }) {
  const total = props.good + props.fair + props.poor;
  let x = 0;
  const parts = (['good', 'fair', 'poor'] as const).map((k) => {
    const w = total ? (props[k] / total) * 100 : 0;
    const part = { k, x, w, n: props[k] };
    x += w;
    return part;
  });
  const pct = (n: number) => (total ? `${Math.round((n / total) * 100)} %` : '0 %');
  return (
    <figure class="chart">
      <svg
        class="stack"
        viewBox="0 0 100 10"
        preserveAspectRatio="none"
        role="img"
        aria-label={`Quality: ${props.good} good, ${props.fair} fair, ${props.poor} poor`}
      >
        {total === 0 ? <rect class="meter-bg" x={0} y={0} width={100} height={10} /> : null}
        {parts.map((p) =>
          p.w > 0 ? <rect key={p.k} class={`q-${p.k}`} x={p.x} y={0} width={p.w} height={10} /> : null,
        )}
      </svg>
      <ul class="legend">
        {parts.map((p) => (
          <li key={p.k}>
            <span class={`swatch q-${p.k}`} aria-hidden="true" />
            {p.k[0].toUpperCase() + p.k.slice(1)} <strong>{p.n}</strong> <span class="muted">({pct(p.n)})</span>
          </li>
        ))}
      </ul>
    </figure>
  );
}
