/** The wait for `final` after `stop`: it settles with `final`, or `undefined` on close or timeout. */
import type { FinalEvent } from './events.js';

export interface FinalWait {
  readonly result: Promise<FinalEvent | undefined>;
  /** `final` arrived. */
  final(f: FinalEvent): void;
  /** The socket closed first. */
  closed(): void;
}

export function waitForFinal(timeoutMs: number): FinalWait {
  let settle!: (f: FinalEvent | undefined) => void;
  const result = new Promise<FinalEvent | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMs);
    settle = (f) => {
      clearTimeout(timer);
      resolve(f);
    };
  });
  return { result, final: (f) => settle(f), closed: () => settle(undefined) };
}
