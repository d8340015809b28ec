// Reusable Float64Arrays by name, for callers that run the same analysis over and over (the
// streaming estimator analyses a window of the same length every second). Each typed array the
// chain would otherwise allocate costs a zeroed off-heap buffer and later garbage-collection work;
// a pool keeps one per name and length. No method here, so no citation.

/**
 * Named arrays, each valid until the same name is asked for again. Shared only by callers that never
 * hold its arrays past their own synchronous use (the streaming estimators on one thread).
 */
export class BufferPool {
  private readonly arrays = new Map<string, Float64Array>();

  /** An array of exactly `n` values for `name` (the one handed out last time when n matches; contents unspecified). */
  get(name: string, n: number): Float64Array {
    let a = this.arrays.get(name);
    if (!a || a.length !== n) {
      a = new Float64Array(n);
      this.arrays.set(name, a);
    }
    return a;
  }
}

/**
 * Growable scratch arrays by slot for synchronous stages whose working arrays are never returned:
 * `grow(k, n)` gives slot k with at least n values (contents unspecified), reallocating only when
 * a longer capture needs more.
 */
export function scratchSlots(): (k: number, n: number) => Float64Array {
  const slots: Float64Array[] = [];
  return (k, n) => {
    let a = slots[k];
    if (!a || a.length < n) slots[k] = a = new Float64Array(Math.max(n, 2 * (a?.length ?? 0), 256));
    return a;
  };
}
