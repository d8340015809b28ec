import { describe, expect, it } from 'vitest';
import { FRAMES_HEADER_BYTES, decodeFramesFile } from '@vitals/protocol';
import { FramesWriter, VitalsError, readFramesFile, packets, cropFromImageData, FaceCropper } from '@vitals/sdk';

const pixels = (v: number) => new Uint8Array(3888).fill(v);

describe('FramesWriter', () => {
  it('writes the spec header and self-delimiting packets that protocol decodes back', () => {
    const w = new FramesWriter();
    for (let i = 0; i < 3; i++) w.addFaceCrop({ pixels: pixels(i), tMicros: i * 33_333 });
    w.addQuality({ tMicros: 40_000, faceWidthRatio: 0.4, meanBrightness: 0.5, motionScore: 0.1 });
    w.addTelemetry({
      tMicros: 50_000,
      leftEyeOpenness: 1,
      rightEyeOpenness: 0.5,
      jawOpenness: 0,
      yawDeg: -120,
      pitchDeg: 0,
      rollDeg: 45,
      faceWidthFraction: 0.3,
      meanBrightness: 0.5,
      motionScore: 0,
    });
    w.addAux({ tMicros: 66_666, jpeg: new Uint8Array(20_000).fill(7) });
    const bytes = w.toBytes();
    expect(bytes.length).toBe(w.byteLength);
    expect(new TextDecoder().decode(bytes.subarray(0, 8))).toBe('NCFRAMES');
    expect(bytes[8]).toBe(1);
    const dv = new DataView(bytes.buffer);
    expect(dv.getUint32(12, true)).toBe(w.packetCount);
    expect(Number(dv.getBigUint64(16, true))).toBe(66_666);
    const { header, packets: decoded } = readFramesFile(bytes);
    expect(header.packetCount).toBe(3 + 1 + 1 + 3);
    expect(decoded.map((p) => p.type)).toEqual([1, 1, 1, 2, 3, 4, 4, 4]);
    const first = decoded[0] as { seq: number; pixels: Uint8Array };
    expect(first.seq).toBe(0);
    expect((decoded[2] as { seq: number }).seq).toBe(2);
    const tele = decoded[4] as { slots: Uint8Array };
    // quantization per spec: unit x255, angles clamped to +/-90 then mapped to 0..255
    expect(Array.from(tele.slots.subarray(0, 9))).toEqual([255, 128, 0, 0, 128, 191, 77, 128, 0]);
    expect(decodeFramesFile(bytes).ok).toBe(true);
  });

  it('an explicit duration wins; an empty writer is a valid 32-byte file', () => {
    const w = new FramesWriter();
    expect(w.toBytes().length).toBe(FRAMES_HEADER_BYTES);
    w.addFaceCrop({ pixels: pixels(1), tMicros: 10 });
    w.durationMicros = 30_000_000;
    expect(readFramesFile(w.toBytes()).header.durationMicros).toBe(30_000_000);
  });

  it('refuses to grow past the frames cap and rejects malformed packets', () => {
    const w = new FramesWriter(FRAMES_HEADER_BYTES + 3900);
    w.addFaceCrop({ pixels: pixels(0), tMicros: 0 });
    expect(() => w.addFaceCrop({ pixels: pixels(0), tMicros: 1 })).toThrow(VitalsError);
    expect(() => new FramesWriter().addPacket(new Uint8Array([9, 1, 0]))).toThrow(/unknown packet type/);
  });

  it('readFramesFile names the problem', () => {
    expect(() => readFramesFile(new Uint8Array(40))).toThrow(/magic/);
  });

  it('packet encoders have the spec sizes', () => {
    expect(packets.faceCrop({ pixels: pixels(0), tMicros: 0, seq: 0 }).length).toBe(3900);
    expect(packets.quality({ tMicros: 0, faceWidthRatio: 0, meanBrightness: 0, motionScore: 0 }).length).toBe(18);
    for (const c of packets.aux({ tMicros: 0, jpeg: new Uint8Array(30_000) }))
      expect(c.length).toBeLessThanOrEqual(8192);
  });
});

describe('crop helpers', () => {
  const image = (w: number, h: number) => {
    const data = new Uint8ClampedArray(w * h * 4);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        const i = (y * w + x) * 4;
        data[i] = x < w / 2 ? 200 : 10;
        data[i + 1] = 100;
        data[i + 2] = 50;
        data[i + 3] = 255;
      }
    return { data, width: w, height: h };
  };

  it('cropFromImageData gives 36x36 RGB (alpha dropped) from RGBA', () => {
    const px = cropFromImageData(image(144, 144), { x: 0, y: 0, width: 72, height: 72 });
    expect(px.length).toBe(3888);
    expect(Array.from(px.subarray(0, 3))).toEqual([200, 100, 50]);
    expect(packets.faceCrop({ pixels: px, tMicros: 0, seq: 0 }).length).toBe(3900);
  });

  it('FaceCropper smooths boxes and produces no frame when the face is lost', () => {
    const c = new FaceCropper({ padRatio: 0 });
    const img = image(200, 200);
    expect(c.crop(img, { x: 50, y: 50, width: 80, height: 80 }, 0)).toHaveLength(3888);
    expect(c.crop(img, null, 0.033)).toBeNull();
    expect(c.crop(img, { x: 52, y: 50, width: 80, height: 80 }, 0.066)).toHaveLength(3888);
  });
});

describe('package', () => {
  it('SDK_VERSION matches package.json', async () => {
    const { SDK_VERSION } = await import('@vitals/sdk');
    const pkg = (await import('../package.json', { with: { type: 'json' } })).default as { version: string };
    expect(SDK_VERSION).toBe(pkg.version);
  });
});
