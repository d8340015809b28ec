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
import {
  AUX_GROUP,
  createAuxAnalyzer,
  EMOTION_CLASSES,
  videoToPackets,
  type AuxAnalysis,
  type VideoResult,
} from '../src/index.js';
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

  it('aux images as a series: a full detection every AUX_GROUP, the others from its box, the same means', async () => {
    if (!r.ok) throw new Error(r.code);
    const jpegs = auxJpegs(r.packets);
    const analyzer = await createAuxAnalyzer();
    const full: AuxAnalysis[] = [];
    for (const j of jpegs) full.push(await analyzer.analyze(j));
    const series = analyzer.series!();
    const seq: AuxAnalysis[] = [];
    for (const j of jpegs) seq.push(await series.analyze(j));
    // A group's first image is its full detection; the others were analysed from its box (other
    // floats), every one with a face.
    for (let i = 0; i < jpegs.length; i += AUX_GROUP) expect(seq[i]).toEqual(full[i]);
    const fromBox = seq.filter((a, i) => i % AUX_GROUP !== 0 && JSON.stringify(a) !== JSON.stringify(full[i]));
    expect(fromBox.length).toBeGreaterThan(0.8 * (jpegs.length - Math.ceil(jpegs.length / AUX_GROUP)));
    expect(seq.every((a) => a.emotion && a.gaze)).toBe(true);
    // What the measurement stores: the mean probabilities and the mean gaze, within what a shift of
    // the images by one pixel moves them (docs/media.md, "Aux analyses").
    const mean = (list: AuxAnalysis[]) => ({
      emotion: EMOTION_CLASSES.map((_, k) => list.reduce((s, a) => s + a.emotion![k], 0) / list.length),
      yaw: list.reduce((s, a) => s + a.gaze!.yaw, 0) / list.length,
      pitch: list.reduce((s, a) => s + a.gaze!.pitch, 0) / list.length,
    });
    const a = mean(seq);
    const b = mean(full);
    expect(a.emotion.reduce((s, v, k) => s + Math.abs(v - b.emotion[k]), 0)).toBeLessThan(0.1);
    expect(a.emotion.indexOf(Math.max(...a.emotion))).toBe(b.emotion.indexOf(Math.max(...b.emotion)));
    expect(Math.hypot(a.yaw - b.yaw, a.pitch - b.pitch)).toBeLessThan(0.5 / 57.3);
    // A series split at a group boundary analyses its images as the whole one does.
    const rest = analyzer.series!();
    const tail: AuxAnalysis[] = [];
    for (const j of jpegs.slice(2 * AUX_GROUP)) tail.push(await rest.analyze(j));
    expect(tail).toEqual(seq.slice(2 * AUX_GROUP));
  }, 120_000);

  it('runs only the models of what was ordered: emotion without gaze, gaze without emotion', async () => {
    if (!r.ok) throw new Error(r.code);
    const jpegs = auxJpegs(r.packets).slice(0, AUX_GROUP + 2);
    const analyzer = await createAuxAnalyzer();
    const run = async (want: { emotion: boolean; gaze: boolean }) => {
      const series = analyzer.series!(want);
      const out: AuxAnalysis[] = [];
      for (const j of jpegs) out.push(await series.analyze(j));
      return out;
    };
    const both = await run({ emotion: true, gaze: true });
    const emotionOnly = await run({ emotion: true, gaze: false });
    const gazeOnly = await run({ emotion: false, gaze: true });
    expect(emotionOnly.every((a) => a.emotion?.length === 8 && a.gaze === undefined)).toBe(true);
    expect(gazeOnly.every((a) => a.gaze && a.emotion === undefined)).toBe(true);
    // Without the emotion model the gaze is the same; without the Iris model the emotion model sees
    // the same crop (its contempt share reads eye corners that Iris refines, so that may move).
    expect(gazeOnly.map((a) => a.gaze)).toEqual(both.map((a) => a.gaze));
    for (const [i, a] of emotionOnly.entries())
      for (let k = 0; k < 8; k++) expect(Math.abs(a.emotion![k] - both[i].emotion![k])).toBeLessThan(0.1);
    expect(await analyzer.analyze(jpegs[0], { emotion: false, gaze: false })).toEqual({});
  }, 120_000);

  it('a group whose first image is not a JPEG: nothing for it, full detections for the others', async () => {
    if (!r.ok) throw new Error(r.code);
    const [, second, third] = auxJpegs(r.packets);
    const analyzer = await createAuxAnalyzer();
    const series = analyzer.series!();
    expect(await series.analyze(new Uint8Array([0xff, 0xd8, 1, 2, 3]))).toEqual({});
    expect(await series.analyze(second)).toEqual(await analyzer.analyze(second));
    expect(await series.analyze(third)).toEqual(await analyzer.analyze(third));
  }, 60_000);

  it('a face that moved away from the first image of its group is detected afresh', async () => {
    if (!r.ok) throw new Error(r.code);
    const [first, second] = auxJpegs(r.packets);
    const analyzer = await createAuxAnalyzer();
    // The second image's face 40 px to the right and 20 % smaller: the first one's box no longer fits it.
    const img = jpeg.decode(second, { useTArray: true, formatAsRGBA: true });
    const moved = new Uint8Array(img.data.length).fill(128);
    for (let y = 0; y < img.height; y++)
      for (let x = 0; x < img.width; x++) {
        const sx = Math.round((x - 224 - 40) / 0.8 + 224);
        const sy = Math.round((y - 224) / 0.8 + 224);
        if (sx < 0 || sy < 0 || sx >= img.width || sy >= img.height) continue;
        moved.set(img.data.subarray((sy * img.width + sx) * 4, (sy * img.width + sx) * 4 + 4), (y * img.width + x) * 4);
      }
    const movedJpeg = new Uint8Array(jpeg.encode({ width: img.width, height: img.height, data: moved }, 90).data);
    const series = analyzer.series!();
    await series.analyze(first);
    const fromSeries = await series.analyze(movedJpeg);
    expect(fromSeries.gaze).toBeDefined();
    expect(fromSeries).toEqual(await analyzer.analyze(movedJpeg));
  }, 60_000);

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
