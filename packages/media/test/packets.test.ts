/** The packet stream a video becomes (spec: Streaming protocol, types 1-4; crop rule). */
import path from 'node:path';
import {
  AUX_SIZE,
  CROP_PIXEL_BYTES,
  TELEMETRY_USED_SLOTS,
  type AuxChunkPacket,
  type FaceCropPacket,
  type Packet,
  type QualityPacket,
  type TelemetryPacket,
} from '@vitals/protocol';
import jpeg from 'jpeg-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { videoToPackets, type VideoResult } from '../src/index.js';
import { makeClip, SKIN, skinDetector, tempDir } from './helpers.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());
const at = (name: string): string => path.join(tmp.dir, name);
const FACE: [number, number, number, number] = [100, 50, 120, 140];

const ofType = <T extends Packet>(packets: Packet[], type: T['type']): T[] =>
  packets.filter((p) => p.type === type) as T[];

function ok(r: VideoResult): Extract<VideoResult, { ok: true }> {
  if (!r.ok) throw new Error(`expected ok, got ${r.code}: ${r.message}`);
  return r;
}

describe('a 21 s 25 fps clip with one drawn face', () => {
  let r: Extract<VideoResult, { ok: true }>;
  const progress: number[] = [];
  beforeAll(async () => {
    const file = await makeClip(at('one.mp4'), { seconds: 21, fps: 25, faces: [FACE] });
    r = ok(await videoToPackets(file, { detector: skinDetector, onProgress: (p) => progress.push(p) }));
  });

  it('reports the video as decoded', () => {
    expect(r.stats).toMatchObject({
      width: 320,
      height: 240,
      codec: 'h264',
      container: 'mp4',
      framesDecoded: 525,
    });
    expect(r.stats.durationSec).toBeCloseTo(21, 1);
    expect(r.stats.fps).toBeCloseTo(25, 1);
    expect(r.stats.facePresence).toBe(1);
    expect(r.stats.medianFaceWidthPx).toBeGreaterThan(115);
    expect(r.stats.multipleFaces).toBe(false);
    expect(r.stats.maxFacesSeen).toBe(1);
    expect(r.stats.detector).toBe('test-skin-box');
  });

  it('one type-1 crop per frame, seq = frame index, tMicros from the first frame', () => {
    const crops = ofType<FaceCropPacket>(r.packets, 1);
    expect(crops).toHaveLength(525);
    expect(crops[0].tMicros).toBe(0);
    crops.forEach((c, i) => expect(c.seq).toBe(i));
    expect(crops[25].tMicros).toBe(1_000_000);
    expect(crops.every((c) => c.pixels.length === CROP_PIXEL_BYTES)).toBe(true);
  });

  it('crops the face box without padding: the crop is the skin colour', () => {
    const c = ofType<FaceCropPacket>(r.packets, 1)[300];
    let err = 0;
    for (let i = 0; i < c.pixels.length; i += 3)
      err +=
        Math.abs(c.pixels[i] - SKIN[0]) + Math.abs(c.pixels[i + 1] - SKIN[1]) + Math.abs(c.pixels[i + 2] - SKIN[2]);
    expect(err / (c.pixels.length / 3)).toBeLessThan(25);
  });

  it('type-2 quality at 2 Hz', () => {
    const q = ofType<QualityPacket>(r.packets, 2);
    expect(q.length).toBeGreaterThanOrEqual(41);
    expect(q.length).toBeLessThanOrEqual(43);
    expect(q[1].tMicros - q[0].tMicros).toBeGreaterThanOrEqual(480_000);
    expect(q[5].faceWidthRatio).toBeCloseTo(120 / 320, 1);
    expect(q[5].meanBrightness).toBeGreaterThan(0.5);
    expect(q[5].motionScore).toBeLessThan(0.2);
  });

  it('no type-3 without landmarks, no type-4 unless asked', () => {
    expect(ofType<TelemetryPacket>(r.packets, 3)).toHaveLength(0);
    expect(ofType<AuxChunkPacket>(r.packets, 4)).toHaveLength(0);
  });

  it('packets are in time order', () => {
    const t = r.packets.map((p) => p.tMicros);
    expect(t.every((v, i) => i === 0 || v >= t[i - 1])).toBe(true);
  });

  it('reports progress up to 1', () => {
    expect(progress.length).toBeGreaterThan(10);
    expect(progress.at(-1)).toBe(1);
    expect(progress.every((p, i) => i === 0 || p >= progress[i - 1])).toBe(true);
  });
});

describe('stream details', () => {
  it('keeps variable frame rate timestamps from the container', async () => {
    // 10 s at 30 fps, then 12 s at 20 fps, in one VFR MP4.
    const file = await makeClip(at('vfr.mp4'), {
      seconds: 22,
      fps: 30,
      faces: [FACE],
      filter: "select='lt(t,10)+gte(t,10)*gt(mod(n,3),0)',settb=1/600,setpts='if(lt(N,300),N/30,10+(N-300)/20)/TB'",
      codecArgs: [
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-pix_fmt',
        'yuv420p',
        '-vsync',
        'vfr',
        '-enc_time_base',
        '1/600',
        '-video_track_timescale',
        '600',
      ],
    });
    const r = ok(await videoToPackets(file, { detector: skinDetector }));
    const t = ofType<FaceCropPacket>(r.packets, 1).map((c) => c.tMicros);
    const early = t[11] - t[10];
    const late = t[t.length - 2] - t[t.length - 3];
    expect(early).toBeGreaterThan(32_000);
    expect(early).toBeLessThan(35_000);
    expect(late).toBeGreaterThan(48_000);
    expect(late).toBeLessThan(52_000);
  });

  it('follows the largest of several faces and says so', async () => {
    const file = await makeClip(at('two.mp4'), { seconds: 21, fps: 25, faces: [[10, 60, 60, 70], FACE] });
    const r = ok(await videoToPackets(file, { detector: skinDetector }));
    expect(r.stats.multipleFaces).toBe(true);
    expect(r.stats.maxFacesSeen).toBe(2);
    expect(r.stats.medianFaceWidthPx).toBeGreaterThan(115);
  });

  it('emits no crop while the face is gone', async () => {
    const file = await makeClip(at('gone.mp4'), { seconds: 21, fps: 25, faces: [FACE], faceShare: 0.85 });
    const r = ok(await videoToPackets(file, { detector: skinDetector }));
    const crops = ofType<FaceCropPacket>(r.packets, 1);
    expect(crops.length).toBe(r.stats.framesWithFace);
    expect(crops.at(-1)!.tMicros).toBeLessThan(18_000_000);
  });

  it('aux: 448x448 JPEG crops at 2 Hz, chunked below 8 KB', async () => {
    const file = await makeClip(at('aux.mp4'), { seconds: 21, fps: 25, faces: [FACE] });
    const r = ok(await videoToPackets(file, { detector: skinDetector, aux: true }));
    const chunks = ofType<AuxChunkPacket>(r.packets, 4);
    const frames = new Map<number, AuxChunkPacket[]>();
    for (const c of chunks) frames.set(c.tMicros, [...(frames.get(c.tMicros) ?? []), c]);
    expect(frames.size).toBeGreaterThanOrEqual(41);
    const first = [...frames.values()][3];
    expect(first.every((c) => c.byteLength + 20 <= 8192 && c.width === AUX_SIZE && c.height === AUX_SIZE)).toBe(true);
    const bytes = Buffer.concat(first.sort((a, b) => a.chunkIndex - b.chunkIndex).map((c) => c.payload));
    const img = jpeg.decode(bytes, { useTArray: true });
    expect([img.width, img.height]).toEqual([448, 448]);
  });

  it('abort kills the decode and rejects', async () => {
    const file = await makeClip(at('abort.mp4'), { seconds: 21, fps: 25, faces: [FACE] });
    const ac = new AbortController();
    const p = videoToPackets(file, {
      detector: skinDetector,
      onProgress: (f) => f > 0.2 && ac.abort(new Error('stop')),
      signal: ac.signal,
    });
    await expect(p).rejects.toThrow('stop');
  });
});

describe('telemetry from landmarks', () => {
  it('type 3 quantizes the mesh-derived values; reserved slots stay zero', async () => {
    const file = await makeClip(at('tele.mp4'), { seconds: 21, fps: 25, faces: [FACE] });
    // A detector with a flat synthetic mesh and fixed angles: checks the wiring, not the model.
    const mesh = Array.from({ length: 468 }, () => [150, 100, 0]);
    const r = ok(
      await videoToPackets(file, {
        detector: {
          name: 'mesh-stub',
          detect: async (img) =>
            (await skinDetector.detect(img, { fresh: true })).map((f) => ({
              ...f,
              mesh,
              angles: { yawDeg: 30, pitchDeg: -90, rollDeg: 0 },
            })),
        },
      }),
    );
    const tele = ofType<TelemetryPacket>(r.packets, 3);
    expect(tele.length).toBeGreaterThanOrEqual(80); // 4 Hz over 21 s
    const s = tele[10].slots;
    expect([s[3], s[4], s[5]]).toEqual([Math.round((120 / 180) * 255), 0, 128]);
    expect(s[6]).toBe(Math.round(r.packets.find((p): p is QualityPacket => p.type === 2)!.faceWidthRatio * 255));
    expect(Array.from(s.subarray(TELEMETRY_USED_SLOTS)).every((v) => v === 0)).toBe(true);
  });
});

describe('keepCrops: false with onPacket (a caller that consumes the crops as they come)', () => {
  it('hands over the packets of a kept run in order, and keeps all but the crops', async () => {
    const file = await makeClip(at('consumed.mp4'), { seconds: 21, fps: 25, faces: [FACE] });
    const kept = ok(await videoToPackets(file, { detector: skinDetector, aux: true }));
    const seen: Packet[] = [];
    const consumed = ok(
      await videoToPackets(file, {
        detector: skinDetector,
        aux: true,
        keepCrops: false,
        onPacket: (p) => seen.push(p),
      }),
    );
    expect(ofType(kept.packets, 1).length).toBeGreaterThan(400);
    expect(seen).toEqual(kept.packets.filter((p) => p.type !== 4));
    expect(consumed.packets).toEqual(kept.packets.filter((p) => p.type !== 1));
    expect(ofType(consumed.packets, 4).length).toBeGreaterThan(0);
    expect(consumed.stats).toEqual(kept.stats);
  });
});
