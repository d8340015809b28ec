/**
 * The Chromium camera test's diagnostics (docs/capture.md "Cloud and device, compared"): a capture's
 * kept frames file replayed through the engine in Node, both estimators, so a cloud result can be
 * told apart from its capture (the same packets in Node give the server's answer, or the server
 * lost frames), and the check that the fake camera kept its 30 fps.
 */
import { estimateOffline, StreamingEstimator, type EngineMeasurement } from '@vitals/engine';
import { decodeFramesFile, type Packet } from '@vitals/protocol';

/**
 * Below this the run is overloaded: Chromium's file camera plays every frame late and never catches
 * up, so the face (and its pulse) is played slow in wall-clock time and a bpm comparison is not a
 * measurement of the capture (docs/capture.md "An overloaded run").
 */
export const MIN_CAMERA_FPS = 29;

export interface Replay {
  crops: number;
  spanSec: number;
  fps: number;
  largestGapMs: number;
  offline: Summary;
  streaming: Summary;
  /** The `hr` values of the streaming estimator's live events over the same packets, in order. */
  liveHr: number[];
}

export interface Summary {
  level: string;
  score: number;
  hr: number | null;
  internalHr: number | null;
}

function summary(m: EngineMeasurement): Summary {
  const round = (v: number | null | undefined): number | null => (v == null ? null : Math.round(v * 10) / 10);
  return {
    level: m.quality.level,
    score: Math.round(m.quality.score * 1000) / 1000,
    hr: round(m.cardiac.heartRate?.value),
    internalHr: round(m.stats.internalHeartRateBpm),
  };
}

/** The packets of a kept frames file through `estimateOffline` and through `StreamingEstimator`. */
export function replay(framesFile: Uint8Array): Replay {
  const file = decodeFramesFile(framesFile);
  if (!file.ok) throw new Error(`the kept frames file does not decode: ${JSON.stringify(file)}`);
  const packets: Packet[] = file.packets;
  const t = packets.filter((p) => p.type === 1).map((p) => p.tMicros);
  let gap = 0;
  for (let i = 1; i < t.length; i++) gap = Math.max(gap, t[i] - t[i - 1]);
  const spanSec = t.length > 1 ? (t[t.length - 1] - t[0]) / 1e6 : 0;
  const streaming = new StreamingEstimator();
  const liveHr: number[] = [];
  for (const p of packets) for (const e of streaming.push(p)) if (e.t === 'hr') liveHr.push(e.hr);
  return {
    crops: t.length,
    spanSec: Math.round(spanSec * 100) / 100,
    fps: spanSec > 0 ? Math.round(((t.length - 1) / spanSec) * 100) / 100 : 0,
    largestGapMs: Math.round(gap / 1000),
    offline: summary(estimateOffline(packets)),
    streaming: summary(streaming.finish()),
    liveHr,
  };
}

/**
 * Throws (the test fails with this message, not with a bpm figure) when the camera produced fewer
 * than MIN_CAMERA_FPS frames a second over the capture: `cameraFrames` (the track's own count,
 * Chromium), else the frames the page read. Frames the camera produced but the page did not read
 * are gaps in real time, not a slow face: the engine handles those, and the bpm is compared.
 */
export function expectCameraKeptUp(
  what: string,
  stats: { framesRead: number; cameraFrames?: number },
  seconds: number,
  load: string,
): void {
  const frames = stats.cameraFrames ?? stats.framesRead;
  const fps = frames / seconds;
  if (fps < MIN_CAMERA_FPS)
    throw new Error(
      `OVERLOADED RUN (${what}): the fake camera delivered ${fps.toFixed(1)} fps (${frames} frames in ${seconds} s; ` +
        `${stats.framesRead} read), under ${MIN_CAMERA_FPS}: it played the face slow, so its heart rate is not ` +
        `compared (load average ${load}; run this file alone on a quieter machine, docs/capture.md)`,
    );
}
