/**
 * Emotion and gaze on a reassembled JPEG (docs/streaming.md): live `emotion`/`gaze` events and the
 * sums the final measurement averages. At most one analysis in flight per session (the models
 * run at up to 2 Hz anyway); a failed analysis degrades emotion/gaze only.
 */
import type { StreamConnection } from './connection.js';
import { sendLive } from './outbound.js';

export function analyzeAux(c: StreamConnection, jpeg: Uint8Array, tMicros: number): void {
  if (c.auxBusy || !c.analyzer) return;
  c.auxBusy = true;
  c.analyzer
    .analyze(jpeg)
    .then((r) => {
      if (c.phase !== 'running' && c.phase !== 'finishing') return;
      const tMs = Math.round(tMicros / 1000);
      if (r.emotion && c.accepted.includes('emotion')) {
        c.auxAgg.emotionSamples++;
        r.emotion.forEach((v, i) => (c.auxAgg.emotionSum[i] += v));
        sendLive(c, { t: 'emotion', probs: r.emotion, tMs });
      }
      if (r.gaze && c.accepted.includes('gaze')) {
        c.auxAgg.gazeSamples++;
        c.auxAgg.yawSum += r.gaze.yaw;
        c.auxAgg.pitchSum += r.gaze.pitch;
        sendLive(c, { t: 'gaze', yaw: r.gaze.yaw, pitch: r.gaze.pitch, tMs });
      }
    })
    .catch(() => undefined) // a failed aux frame degrades emotion/gaze only
    .finally(() => (c.auxBusy = false));
}
