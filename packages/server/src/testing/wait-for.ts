/**
 * The one way tests wait for something that happens asynchronously (a job settling, a row arriving,
 * a socket event): polls `probe` until it returns a value other than undefined, null or false, and
 * resolves with it; past `timeoutMs` it rejects naming `what` and the last value seen. Waiting on
 * time itself is not what this is for: move the injected clock instead.
 */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<Exclude<T, undefined | null | false>> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const until = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await probe();
    if (last !== undefined && last !== null && last !== false) return last as Exclude<T, undefined | null | false>;
    if (Date.now() > until) {
      const seen = typeof last === 'object' ? JSON.stringify(last) : String(last);
      throw new Error(`waitFor: ${opts.what ?? 'condition'} not met within ${timeoutMs} ms (last: ${seen})`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 20));
  }
}
