/**
 * The real detector (Human: BlazeFace + FaceMesh on tfjs-wasm, local models) on a real face.
 * Clips are cut at test time from a UBFC-rPPG recording in ../shared/data (evaluation only, never
 * copied into the repository); without that folder these cases are skipped. The aux analyzer's
 * no-face behaviour needs no recording and always runs.
 */
import path from 'node:path';
import type { AuxChunkPacket, Packet, TelemetryPacket } from '@vitals/protocol';
import { dequantizeTelemetry } from '@vitals/protocol';
import jpeg from 'jpeg-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuxAnalyzer, EMOTION_CLASSES, videoToPackets, type VideoResult } from '../src/index.js';
import { cutReal, HAS_UBFC, tempDir, UBFC_SAMPLE } from './helpers.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());
const at = (name: string): string => path.join(tmp.dir, name);

function auxJpegs(packets: Packet[]): Uint8Array[] {
  const byT = new Map<number, AuxChunkPacket[]>();
  for (const p of packets) if (p.type === 4) byT.set(p.tMicros, [...(byT.get(p.tMicros) ?? []), p]);
  return [...byT.values()].map((cs) =>
    Buffer.concat(cs.sort((a, b) => a.chunkIndex - b.chunkIndex).map((c) => c.payload)),
  );
}

describe.skipIf(!HAS_UBFC)('a real face (UBFC-rPPG subject 3, 21 s)', () => {
  let r: VideoResult;
  beforeAll(async () => {
    r = await videoToPackets(await cutReal(UBFC_SAMPLE, at('real.mp4'), 21), { aux: true });
  }, 90_000);

  it('is accepted, with the face in nearly every frame', () => {
    if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
    expect(r.stats.facePresence).toBeGreaterThan(0.95);
    expect(r.stats.medianFaceWidthPx).toBeGreaterThan(100);
    expect(r.stats.medianFaceWidthPx).toBeLessThan(170);
    expect(r.stats.multipleFaces).toBe(false);
    expect(r.stats.detector).toMatch(/^human@/);
  });

  it('telemetry says: eyes open, mouth closed, head roughly frontal', () => {
    if (!r.ok) throw new Error(r.code);
    const tele = r.packets.filter((p): p is TelemetryPacket => p.type === 3).map((p) => dequantizeTelemetry(p.slots));
    expect(tele.length).toBeGreaterThan(75);
    const mid = (k: keyof (typeof tele)[0]): number => tele.map((t) => t[k]).sort((a, b) => a - b)[tele.length >> 1];
    expect(mid('leftEyeOpenness')).toBeGreaterThan(0.3);
    expect(mid('rightEyeOpenness')).toBeGreaterThan(0.3);
    expect(mid('jawOpenness')).toBeLessThan(0.3);
    expect(Math.abs(mid('yawDeg'))).toBeLessThan(25);
    expect(Math.abs(mid('rollDeg'))).toBeLessThan(25);
    expect(mid('faceWidthFraction')).toBeGreaterThan(0.15);
  });

  it('aux JPEGs carry the face: the analyzer returns 8 emotion probabilities and a gaze', async () => {
    if (!r.ok) throw new Error(r.code);
    const jpegs = auxJpegs(r.packets);
    expect(jpegs.length).toBeGreaterThanOrEqual(41);
    const analyzer = await createAuxAnalyzer();
    expect(analyzer.emotionAvailable).toBe(true);
    expect(analyzer.gazeAvailable).toBe(true);
    const a = await analyzer.analyze(jpegs[10]);
    expect(a.emotion).toHaveLength(EMOTION_CLASSES.length);
    expect(a.emotion!.reduce((s, v) => s + v, 0)).toBeCloseTo(1, 5);
    expect(a.gaze).toBeDefined();
    expect(Math.abs(a.gaze!.yaw)).toBeLessThan(0.8);
    expect(Math.abs(a.gaze!.pitch)).toBeLessThan(0.8);
  });

  it('face_too_small with the real detector: the same face at 320x240', async () => {
    const small = await videoToPackets(await cutReal(UBFC_SAMPLE, at('small.mp4'), 21, '320:240'));
    expect(small).toMatchObject({ ok: false, code: 'face_too_small' });
  }, 90_000);
});

describe('aux analyzer without a face', () => {
  it('returns nothing for a blank image or bytes that are not a JPEG', async () => {
    const analyzer = await createAuxAnalyzer();
    const grey = jpeg.encode({ data: new Uint8Array(448 * 448 * 4).fill(128), width: 448, height: 448 }, 80).data;
    expect(await analyzer.analyze(new Uint8Array(grey))).toEqual({});
    expect(await analyzer.analyze(new Uint8Array([1, 2, 3]))).toEqual({});
  }, 30_000);
});
