// `--steady=HZ,SEC` of the development tools (scripts/bench/media.ts, scripts/eval/box-sensitivity.ts):
// steady rates other than STEADY_VIDEO's, analyses a second and seconds between full detections.
import type { SteadyRates } from '@vitals/tracker';

/** The rates of a `--steady=HZ,SEC` argument among `argv`; null without one; throws on a malformed one. */
export function steadyArg(argv: readonly string[]): SteadyRates | null {
  const arg = argv.find((a) => a.startsWith('--steady='));
  if (!arg) return null;
  const [analysisHz, redetectSec, ...rest] = arg.slice('--steady='.length).split(',').map(Number);
  if (rest.length || !(analysisHz > 0 && analysisHz <= 30) || !(redetectSec > 0 && redetectSec <= 60))
    throw new Error(`${arg}: expected --steady=HZ,SEC, analyses a second (0-30] and seconds between detections (0-60]`);
  return { analysisHz, redetectSec };
}
