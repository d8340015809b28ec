/**
 * Emotion and gaze models for live sessions, loaded lazily, only when a session orders them
 * (`@vitals/media` is Node-only and slow to initialise). With media threads (the default) they
 * load and run on a worker thread of their own (batch/media-threads.ts `liveAux`), so an analysis
 * (tens of ms of model inference) never holds the event loop that serves every session's frames;
 * with `VITALS_MEDIA_THREADS=0` they load once per process on the main thread, as before. A node
 * that cannot load them strips `emotion`/`gaze` from `acceptedFeatures`, and they are not billed
 * (spec: `ready` rule).
 */
import type { AuxAnalyzer } from '@vitals/media';
import type { AppContext } from '../context.js';

const LOAD_TIMEOUT_MS = 30_000;
const UNAVAILABLE: AuxAnalyzer = { emotionAvailable: false, gazeAvailable: false, analyze: async () => ({}) };

let onMainThread: Promise<AuxAnalyzer> | undefined;
let forTests: AuxAnalyzer | undefined;

export function auxAnalyzer(ctx: AppContext): Promise<AuxAnalyzer> {
  if (forTests) return Promise.resolve(forTests);
  const threaded = ctx.batch?.threads.liveAux();
  if (threaded) return withinTimeout(threaded);
  onMainThread ??= withinTimeout(import('@vitals/media').then((media) => media.createAuxAnalyzer()));
  return onMainThread;
}

/** The analyzer, or UNAVAILABLE when it fails to load or takes longer than LOAD_TIMEOUT_MS. */
async function withinTimeout(loading: Promise<AuxAnalyzer>): Promise<AuxAnalyzer> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<AuxAnalyzer>((resolve) => {
    timer = setTimeout(() => resolve(UNAVAILABLE), LOAD_TIMEOUT_MS);
    timer.unref();
  });
  try {
    return await Promise.race([loading, timeout]);
  } catch {
    return UNAVAILABLE;
  } finally {
    clearTimeout(timer);
  }
}

/** Test seam: replace the analyzer (or reset to the configured one with undefined). */
export function setAuxAnalyzerForTests(a: AuxAnalyzer | undefined): void {
  forTests = a;
  onMainThread = undefined;
}
