/** Type-3 quantization (spec: values in [0,1] as round(v*255); angles as round((clamp(deg,-90,90)+90)/180*255)). */
import { expect, test } from 'vitest';
import { dequantizeTelemetry, quantizeAngle, quantizeTelemetry, quantizeUnit } from '../src/telemetry.js';

test.for([
  [0, 0],
  [1, 255],
  [0.5, 128], // 127.5 rounds up
  [0.2, 51],
  [-0.3, 0],
  [1.7, 255],
  [Number.NaN, 0],
])('quantizeUnit(%s) = %i', ([v, q]) => {
  expect(quantizeUnit(v)).toBe(q);
});

test.for([
  [-90, 0],
  [90, 255],
  [0, 128], // (0+90)/180*255 = 127.5
  [45, 191], // 135/180*255 = 191.25
  [-45, 64], // 45/180*255 = 63.75
  [-120, 0],
  [120, 255],
])('quantizeAngle(%s°) = %i', ([deg, q]) => {
  expect(quantizeAngle(deg)).toBe(q);
});

// 0.9→229.5→230, 0.8→204, 0.1→25.5→26, 10°→141.67→142, -5°→120.42→120, 2°→130.33→130, 0.3→76.5→77, 0.6→153, 0.05→12.75→13
test('slots 0..8 in the spec order, 9..55 zero, and back within one quantization step', () => {
  const t = {
    leftEyeOpenness: 0.9,
    rightEyeOpenness: 0.8,
    jawOpenness: 0.1,
    yawDeg: 10,
    pitchDeg: -5,
    rollDeg: 2,
    faceWidthFraction: 0.3,
    meanBrightness: 0.6,
    motionScore: 0.05,
  };
  const s = quantizeTelemetry(t);
  expect(s.length).toBe(56);
  expect(Array.from(s.subarray(0, 9))).toEqual([230, 204, 26, 142, 120, 130, 77, 153, 13]);
  expect(s.subarray(9).every((x) => x === 0)).toBe(true);
  const back = dequantizeTelemetry(s);
  for (const [k, v] of Object.entries(t)) {
    const step = k.endsWith('Deg') ? 180 / 255 : 1 / 255;
    expect(Math.abs((back as any)[k] - v)).toBeLessThanOrEqual(step / 2 + 1e-9);
  }
});
