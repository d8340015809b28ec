// A face-like 36x36 crop for the phantom: the face box with no padding (spec crop rule), so the
// crop holds a skin ellipse with forehead and cheeks, eyes, brows, lips, a hairline and
// background corners. Only skin pixels carry the pulse, with the relative strength per channel
// of the blood-volume-pulse signature of de Haan & van Leest, "Improved motion robustness of
// remote-PPG by using the blood volume pulse signature", Physiol. Meas. 35(9), 2014.

export type Region = 'skin' | 'hair' | 'eye' | 'pupil' | 'brow' | 'lip' | 'background';

export interface FaceColours {
  skin: [number, number, number];
  hair: [number, number, number];
  background: [number, number, number];
}

export const DEFAULT_COLOURS: FaceColours = {
  skin: [196, 140, 112],
  hair: [52, 38, 30],
  background: [110, 120, 138],
};

/** Relative pulsatile strength per channel (R, G, B), green strongest. */
export const PBV_SIGNATURE: [number, number, number] = [0.33, 0.77, 0.53];

const EYE_CENTRES = [0.31, 0.69] as const;

/** Region at normalised face coordinates (u right, v down, both 0..1 over the face box). */
export function regionAt(u: number, v: number): Region {
  const du = (u - 0.5) / 0.47;
  const dv = (v - 0.53) / 0.52;
  if (du * du + dv * dv > 1) return v < 0.45 ? 'hair' : 'background';
  if (v < 0.1) return 'hair';
  for (let k = 0; k < EYE_CENTRES.length; k++) {
    const cx = EYE_CENTRES[k];
    const ex = (u - cx) / 0.085;
    const ey = (v - 0.41) / 0.04;
    const e = ex * ex + ey * ey;
    if (e < 0.25) return 'pupil';
    if (e < 1) return 'eye';
    if (Math.abs(u - cx) < 0.11 && Math.abs(v - 0.33) < 0.018) return 'brow';
  }
  const lx = (u - 0.5) / 0.14;
  const ly = (v - 0.8) / 0.04;
  if (lx * lx + ly * ly < 1) return 'lip';
  return 'skin';
}

export function regionColour(r: Region, c: FaceColours): [number, number, number] {
  switch (r) {
    case 'skin':
      return c.skin;
    case 'hair':
    case 'brow':
      return c.hair;
    case 'eye':
      return [228, 226, 222];
    case 'pupil':
      return [30, 24, 22];
    case 'lip':
      return [Math.min(255, c.skin[0] * 0.95), c.skin[1] * 0.6, c.skin[2] * 0.65];
    default:
      return c.background;
  }
}
