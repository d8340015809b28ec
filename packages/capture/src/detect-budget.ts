/**
 * The tracker worker's detection budget (docs/capture.md "Threads and the detection budget"): the
 * analysis rate is 4 Hz while the detector's time stays under `budget` of the wall clock, 2 Hz
 * otherwise. The first call of a capture is left out (it compiles the WASM kernels and is several
 * times slower than the rest: an average that starts from it held 2 Hz for the whole capture), the
 * average decays (EMA, weight 0.2 a call) and follows the detector both ways, and stepping back up
 * needs the 4 Hz cost under 80 % of the budget so the rate does not flap at the edge.
 */
export const FAST_HZ = 4;
export const SLOW_HZ = 2;
/** Calls left out of the average at the start of a capture. */
export const WARMUP_CALLS = 1;
const WEIGHT = 0.2;
/** Back to 4 Hz only when 4 Hz would take under this share of the budget. */
const STEP_UP_MARGIN = 0.8;

export class DetectBudget {
  private calls = 0;
  private ema = NaN;
  hz = FAST_HZ;

  /** @param budget Share of the wall clock detection may take (0..1). */
  constructor(private readonly budget: number) {}

  /** One detector call of `ms`; returns the analysis rate to use from now on. */
  record(ms: number): number {
    this.calls++;
    if (this.calls <= WARMUP_CALLS) return this.hz;
    this.ema = Number.isNaN(this.ema) ? ms : this.ema + WEIGHT * (ms - this.ema);
    // Seconds of detection per wall-clock second at 4 Hz.
    const shareAtFast = (this.ema * FAST_HZ) / 1000;
    if (this.hz === FAST_HZ && shareAtFast > this.budget) this.hz = SLOW_HZ;
    else if (this.hz === SLOW_HZ && shareAtFast < this.budget * STEP_UP_MARGIN) this.hz = FAST_HZ;
    return this.hz;
  }

  /** The averaged detector ms per call (warm-up excluded), NaN before any. */
  get averageMs(): number {
    return this.ema;
  }
}
