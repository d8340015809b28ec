// The streaming benchmark's breakdown (issue 18, target 3): what the estimators alone cost per
// frame at the session count the server was compared at, in a process of their own with no socket:
// N StreamingEstimators fed the generator's phantom crops round-robin from memory, as fast as they
// run. Twice: the crops as they are, then each one first copied into a buffer of its own of a
// socket read's size (3906 bytes, a fresh ArrayBuffer per frame, as Node allocates for every
// read of a ws message): the difference is the garbage collection that such buffers cost a heap
// holding N estimators (the bare ws server has the buffers but not the heap). CPU is the process's
// user + system time, all threads, and the main thread's own from /proc (Linux).
import fs from 'node:fs';

const FPS = 30;
const WARM_SEC = 15;
const MEASURE_SEC = 5;

function mainThreadMs(): number {
  try {
    const f = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(x[11]) + Number(x[12])) * 10;
  } catch {
    return NaN;
  }
}

/** One measurement, in a process of its own (the role `engine` of streaming.ts; a fresh heap each). */
export async function engineAlone(sessions: number, readBuffers: boolean): Promise<{ allUs: number; mainUs: number }> {
  const { StreamingEstimator, generatePhantom } = await import('../../../packages/engine/src/index.js');
  const { packets } = generatePhantom({ durationSec: 20, fps: FPS, heartRateBpm: 72, seed: 9 });
  const crops = packets.filter((p) => p.type === 1) as Array<{ pixels: Uint8Array; flags?: number }>;
  const estimators = Array.from({ length: sessions }, () => new StreamingEstimator());
  // Random phases, as the generator's sessions: their once-a-second analyses do not coincide.
  const phase = estimators.map(() => Math.floor(Math.random() * FPS));
  let kept: Buffer | undefined;
  let c0 = process.cpuUsage();
  let m0 = mainThreadMs();
  let frames = 0;
  for (let i = 0; i < (WARM_SEC + MEASURE_SEC) * FPS; i++) {
    if (i === WARM_SEC * FPS) {
      (globalThis as { gc?: () => void }).gc?.();
      c0 = process.cpuUsage();
      m0 = mainThreadMs();
      frames = 0;
    }
    for (let s = 0; s < sessions; s++) {
      const k = i + phase[s];
      let pixels = crops[k % crops.length].pixels;
      if (readBuffers) {
        kept = Buffer.allocUnsafeSlow(3906);
        kept.set(pixels, 18);
        pixels = kept.subarray(18, 18 + pixels.length);
      }
      estimators[s].push({ type: 1, seq: k, tMicros: Math.round((k * 1e6) / FPS), flags: 0, pixels });
      frames++;
    }
  }
  const c = process.cpuUsage(c0);
  void kept;
  /** CPU per frame, all threads and the main thread's, µs. */
  return { allUs: (c.user + c.system) / frames, mainUs: ((mainThreadMs() - m0) * 1000) / frames };
}
