/**
 * Type-3 telemetry quantization (spec: Streaming protocol, type 3): values in [0,1] as
 * round(v*255); angles as round((clamp(deg,-90,90)+90)/180*255).
 */
import { TELEMETRY_SLOTS } from './packets.js';

export interface Telemetry {
  leftEyeOpenness: number;
  rightEyeOpenness: number;
  jawOpenness: number;
  yawDeg: number;
  pitchDeg: number;
  rollDeg: number;
  faceWidthFraction: number;
  meanBrightness: number;
  motionScore: number;
}

const clamp = (v: number, lo: number, hi: number): number => (v < lo ? lo : v > hi ? hi : v);

export function quantizeUnit(v: number): number {
  return Math.round(clamp(Number.isFinite(v) ? v : 0, 0, 1) * 255);
}
export function quantizeAngle(deg: number): number {
  return Math.round(((clamp(Number.isFinite(deg) ? deg : 0, -90, 90) + 90) / 180) * 255);
}
export function dequantizeUnit(q: number): number {
  return q / 255;
}
export function dequantizeAngle(q: number): number {
  return (q / 255) * 180 - 90;
}

export function quantizeTelemetry(t: Telemetry): Uint8Array {
  const slots = new Uint8Array(TELEMETRY_SLOTS);
  slots[0] = quantizeUnit(t.leftEyeOpenness);
  slots[1] = quantizeUnit(t.rightEyeOpenness);
  slots[2] = quantizeUnit(t.jawOpenness);
  slots[3] = quantizeAngle(t.yawDeg);
  slots[4] = quantizeAngle(t.pitchDeg);
  slots[5] = quantizeAngle(t.rollDeg);
  slots[6] = quantizeUnit(t.faceWidthFraction);
  slots[7] = quantizeUnit(t.meanBrightness);
  slots[8] = quantizeUnit(t.motionScore);
  return slots;
}

export function dequantizeTelemetry(slots: Uint8Array): Telemetry {
  return {
    leftEyeOpenness: dequantizeUnit(slots[0]),
    rightEyeOpenness: dequantizeUnit(slots[1]),
    jawOpenness: dequantizeUnit(slots[2]),
    yawDeg: dequantizeAngle(slots[3]),
    pitchDeg: dequantizeAngle(slots[4]),
    rollDeg: dequantizeAngle(slots[5]),
    faceWidthFraction: dequantizeUnit(slots[6]),
    meanBrightness: dequantizeUnit(slots[7]),
    motionScore: dequantizeUnit(slots[8]),
  };
}
