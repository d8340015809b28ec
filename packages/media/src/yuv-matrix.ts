// The colour matrices of the I420 → RGB conversion (yuv.ts, yuv-crop.ts) and libswscale's 16-bit
// coefficients made from them.

/** The colour matrices the conversion knows, as libswscale's inverse tables (crv, cbu, cgu, cgv; 16.16). */
const MATRICES = {
  bt601: [104597, 132201, 25675, 53279],
  bt709: [117489, 138438, 13975, 34925],
} as const;

export type YuvMatrix = keyof typeof MATRICES;

/** libswscale's roundToInt16 of a 16.16 coefficient scaled by 2^13. */
const coeff = (c: number): number => Math.floor((c * 8192 + 32768) / 65536);

/** The conversion's 16-bit coefficients (libswscale's, rounded from the matrix): luma, then V→R, U→B, U→G, V→G. */
export function yuvCoefficients(matrix: YuvMatrix): { yCoeff: number; vr: number; ub: number; ug: number; vg: number } {
  const [crv, cbu, cgu, cgv] = MATRICES[matrix];
  // Limited range: luma scaled by 255/219 (16.16, integer division as libswscale does), offset 16.
  const yCoeff = coeff(Math.floor((65536 * 255) / 219));
  return { yCoeff, vr: coeff(crv), ub: coeff(cbu), ug: coeff(-cgu), vg: coeff(-cgv) };
}
