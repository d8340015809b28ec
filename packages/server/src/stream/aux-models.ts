/**
 * Emotion and gaze models, loaded lazily and once per process, only when a session orders them
 * (`@vitals/media` is Node-only and slow to initialise). A node that cannot load them strips
 * `emotion`/`gaze` from `acceptedFeatures`, and they are not billed (spec: `ready` rule).
 */
import type { AuxAnalyzer } from '@vitals/media';

const LOAD_TIMEOUT_MS = 30_000;
const UNAVAILABLE: AuxAnalyzer = { emotionAvailable: false, gazeAvailable: false, analyze: async () => ({}) };

let loading: Promise<AuxAnalyzer> | undefined;

export function auxAnalyzer(): Promise<AuxAnalyzer> {
  loading ??= (async () => {
    try {
      const media = await import('@vitals/media');
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<AuxAnalyzer>((resolve) => {
        timer = setTimeout(() => resolve(UNAVAILABLE), LOAD_TIMEOUT_MS);
        timer.unref();
      });
      const a = await Promise.race([media.createAuxAnalyzer(), timeout]);
      clearTimeout(timer);
      return a;
    } catch {
      return UNAVAILABLE;
    }
  })();
  return loading;
}

/** Test seam: replace the analyzer (or reset to lazy loading with undefined). */
export function setAuxAnalyzerForTests(a: AuxAnalyzer | undefined): void {
  loading = a ? Promise.resolve(a) : undefined;
}
