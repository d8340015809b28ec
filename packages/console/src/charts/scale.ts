/** Linear scales and "nice" axis ticks for the hand-drawn SVG charts (docs/decisions.md, Console). */

export type Scale = (v: number) => number;

export function linear(domain: [number, number], range: [number, number]): Scale {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0 || 1;
  return (v) => r0 + ((v - d0) / span) * (r1 - r0);
}

/**
 * About `count` round tick values covering [min, max] (steps of 1, 2 or 5 times a power of ten);
 * `integer` keeps steps whole (counts).
 */
export function niceTicks(min: number, max: number, count = 4, integer = false): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0];
  if (max === min) {
    const pad = Math.abs(max) > 0 ? Math.abs(max) * 0.1 : 1;
    min -= pad;
    max += pad;
  }
  const raw = (max - min) / Math.max(1, count);
  const pow = 10 ** Math.floor(Math.log10(raw));
  const nice = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw) ?? 10 * pow;
  const step = integer ? Math.max(1, nice) : nice;
  const first = Math.floor(min / step) * step;
  const out: number[] = [];
  for (let v = first; v <= max + step * 1e-9; v += step) out.push(Number(v.toFixed(10)));
  if (out[out.length - 1] < max) out.push(Number((out[out.length - 1] + step).toFixed(10)));
  return out;
}

/** At most `max` points, keeping each bucket's min and max so peaks survive (for raw PPG). */
export function decimate(values: readonly number[], max: number): Array<[number, number]> {
  if (values.length <= max) return values.map((v, i) => [i, v]);
  const out: Array<[number, number]> = [];
  const bucket = values.length / (max / 2);
  for (let b = 0; b * bucket < values.length; b++) {
    const start = Math.floor(b * bucket);
    const end = Math.min(values.length, Math.floor((b + 1) * bucket));
    let lo = start;
    let hi = start;
    for (let i = start; i < end; i++) {
      if (values[i] < values[lo]) lo = i;
      if (values[i] > values[hi]) hi = i;
    }
    if (lo <= hi) out.push([lo, values[lo]], [hi, values[hi]]);
    else out.push([hi, values[hi]], [lo, values[lo]]);
  }
  return out;
}
