/** Emotion class mapping (7 model classes → the spec's 8), gaze geometry and JPEG stream splitting. */
import jpeg from 'jpeg-js';
import { describe, expect, it } from 'vitest';
import { EMOTION_CLASSES } from '../src/index.js';
import { gazeFromMesh, lipCornerAsymmetry, toEightClasses } from '../src/aux-analyzer.js';
import { jpegEnd } from '../src/jpeg-encoder.js';

/** A level neutral mesh: eyes at y=100, mouth corners level at y=200. */
function mesh(): number[][] {
  const m = Array.from({ length: 478 }, () => [0, 0, 0]);
  m[33] = [100, 100, 0];
  m[133] = [140, 100, 0];
  m[159] = [120, 95, 0];
  m[145] = [120, 105, 0];
  m[263] = [220, 100, 0];
  m[362] = [180, 100, 0];
  m[386] = [200, 95, 0];
  m[374] = [200, 105, 0];
  m[13] = [160, 198, 0];
  m[14] = [160, 202, 0];
  m[61] = [130, 200, 0];
  m[291] = [190, 200, 0];
  for (let i = 468; i < 473; i++) m[i] = [120, 100, 0];
  for (let i = 473; i < 478; i++) m[i] = [200, 100, 0];
  return m;
}

describe('toEightClasses', () => {
  it('puts the seven model classes at the spec positions', () => {
    const names = ['angry', 'disgust', 'fear', 'happy', 'neutral', 'sad', 'surprise'];
    const spec = ['Anger', 'Disgust', 'Fear', 'Happiness', 'Neutral', 'Sadness', 'Surprise'];
    names.forEach((emotion, k) => {
      const out = toEightClasses([{ emotion, score: 1 }], mesh());
      expect(out[EMOTION_CLASSES.indexOf(spec[k] as (typeof EMOTION_CLASSES)[number])]).toBeCloseTo(1, 6);
    });
  });

  it('normalizes to a distribution and gives Contempt 0 for a symmetric mouth', () => {
    const out = toEightClasses(
      [
        { emotion: 'happy', score: 0.3 },
        { emotion: 'neutral', score: 0.3 },
      ],
      mesh(),
    );
    expect(out).toEqual([0, 0, 0, 0, 0.5, 0.5, 0, 0]);
  });

  it('reads Contempt from a one-sided lip-corner raise and keeps the sum at 1', () => {
    const m = mesh();
    m[291] = [190, 188, 0]; // left corner raised by 20 % of mouth width
    expect(lipCornerAsymmetry(m)).toBeCloseTo(0.2, 2);
    const out = toEightClasses([{ emotion: 'neutral', score: 1 }], m);
    expect(out[1]).toBeGreaterThan(0.3);
    expect(out.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
  });

  it('is neutral when the model gave nothing', () => {
    expect(toEightClasses([])[5]).toBe(1);
  });
});

describe('gazeFromMesh', () => {
  it('is the head pose when the irises are centred (Human: yaw + is image-left, pitch + is chin-down)', () => {
    const g = gazeFromMesh(mesh(), 0.2, 0.1)!;
    expect(g.yaw).toBeCloseTo(-0.2, 6);
    expect(g.pitch).toBeCloseTo(-0.1, 6);
  });

  it('turns right and up when the irises do', () => {
    const m = mesh();
    for (let i = 468; i < 478; i++) m[i] = [m[i][0] + 8, 96, 0];
    const g = gazeFromMesh(m, 0, 0)!;
    expect(g.yaw).toBeGreaterThan(0.2);
    expect(g.pitch).toBeGreaterThan(0.1);
  });

  it('needs the iris points', () => {
    expect(gazeFromMesh(mesh().slice(0, 468), 0, 0)).toBeUndefined();
  });
});

describe('jpegEnd', () => {
  const img = new Uint8Array(
    jpeg.encode({ data: new Uint8Array(32 * 32 * 4).fill(90), width: 32, height: 32 }, 80).data,
  );

  it('finds the end of each JPEG in a stream of them', () => {
    const two = new Uint8Array(img.length * 2);
    two.set(img);
    two.set(img, img.length);
    expect(jpegEnd(two)).toBe(img.length);
  });

  it('waits for more bytes when the image is cut', () => {
    expect(jpegEnd(img.subarray(0, img.length - 1))).toBe(-1);
  });
});

describe('packetsToFramesFile', () => {
  it('round-trips every packet type through the frames-file codec', async () => {
    const { packetsToFramesFile } = await import('../src/index.js');
    const { decodeFramesFile, encodeAuxChunks, decodePacket } = await import('@vitals/protocol');
    const aux = encodeAuxChunks({ tMicros: 500, jpeg: new Uint8Array(9000).fill(7) }).map((c) => decodePacket(c));
    const packets = [
      { type: 1 as const, seq: 3, tMicros: 100, flags: 0, pixels: new Uint8Array(3888).fill(9) },
      { type: 2 as const, tMicros: 200, faceWidthRatio: 0.25, meanBrightness: 0.5, motionScore: 0 },
      { type: 3 as const, tMicros: 300, slots: new Uint8Array(56).fill(0).fill(200, 0, 9) },
      ...aux,
    ];
    const file = decodeFramesFile(packetsToFramesFile(packets as never));
    expect(file.ok).toBe(true);
    if (file.ok) {
      expect(file.packets).toEqual(packets);
      expect(file.header.durationMicros).toBe(500);
    }
  });
});
