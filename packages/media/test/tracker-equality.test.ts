/**
 * Issue 15 §2: the tracking moved into the isomorphic tracker (`@vitals/tracker`) without
 * changing a single packet. The digest below was recorded with the video pipeline as it was before
 * the move (commit 25e83c1, `video.ts` + `schedule.ts` + `packetizer.ts`) on the same 21-s cut of
 * UBFC-rPPG subject 3; the pipeline must still produce byte-identical packets. A second run in the
 * same process, with another video's tracker interleaved, must give the same bytes too (each
 * tracker owns its detector state: issue 15 §2, issue 17).
 *
 * Issue 18 added faster settings (FAST_VIDEO: half-size decoding, steady analysis rates); the
 * default stays as recorded, and the fast settings are checked for the same independence.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodePacket, FAST_VIDEO, videoToPackets, type VideoResult } from '../src/index.js';
import { cutReal, HAS_UBFC, tempDir, UBFC_SAMPLE } from './helpers.js';

/** sha256 over the wire bytes of every packet, in order (recorded before the tracker moved). */
const BEFORE = { digest: '24409162958a2f2b2105857f7b8a8a41cb299e1ab64165d93a558a86ae05f037', count: 752 };

const tmp = tempDir();
afterAll(() => tmp.cleanup());

function digest(r: VideoResult): { digest: string; count: number } {
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  const h = createHash('sha256');
  for (const p of r.packets) h.update(encodePacket(p));
  return { digest: h.digest('hex'), count: r.packets.length };
}

describe.skipIf(!HAS_UBFC)('tracker extraction keeps the packets (UBFC-rPPG subject 3, 21 s)', () => {
  let clip: string;
  beforeAll(async () => {
    clip = await cutReal(UBFC_SAMPLE, path.join(tmp.dir, 'eq.mp4'), 21);
  }, 60_000);

  it('gives byte-identical packets to the pipeline before the move', async () => {
    const got = digest(await videoToPackets(clip));
    console.log('tracker-equality digest', JSON.stringify(got));
    expect(got).toEqual(BEFORE);
  }, 120_000);

  it('gives the same packets when ffmpeg converts to RGB (`yuv: false`, the decode before issue 18)', async () => {
    // The default decodes to YUV and converts in JS only what is read (yuv.ts); same bytes.
    expect(digest(await videoToPackets(clip, { yuv: false }))).toEqual(BEFORE);
  }, 120_000);

  it('gives the same packets with another video tracked at the same time (no shared detector state)', async () => {
    // Before the move, two videos in one process shared Human's tracking cache: each call of one
    // forced a fresh detection on the other, so both came out different from a lone run.
    const [a, b] = await Promise.all([videoToPackets(clip), videoToPackets(clip)]);
    expect(digest(a)).toEqual(BEFORE);
    expect(digest(b)).toEqual(BEFORE);
  }, 180_000);

  it('with the fast settings too, a video alone and two at once give the same packets', async () => {
    const alone = digest(await videoToPackets(clip, FAST_VIDEO));
    expect(alone).not.toEqual(BEFORE);
    const [a, b] = await Promise.all([videoToPackets(clip, FAST_VIDEO), videoToPackets(clip, FAST_VIDEO)]);
    expect(digest(a)).toEqual(alone);
    expect(digest(b)).toEqual(alone);
  }, 180_000);
});
