/**
 * A video job's emotion and gaze analysed while its face is still being followed (docs/media.md,
 * "Worker threads"): the video worker hands out each aux JPEG as it encodes it, and parts of
 * AUX_MIN_PER_WORKER images go to the video pool at once, where an idle worker (the second core)
 * analyses them beside the tracking. At the end the images handed out must be the job's aux images
 * (the type-4 chunks of its packets, reassembled) byte for byte; then the parts' analyses, in order,
 * are the answer, else those images are analysed again from the packets. Each image is a full
 * detection with no state carried from the one before, so how the images were split does not
 * change an analysis.
 */
import type { AuxAnalysis } from '@vitals/media/threads';
import { AUX_MIN_PER_WORKER, type MediaThreads } from './media-threads.js';

function sameImages(a: readonly Uint8Array[], b: readonly Uint8Array[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (!Buffer.from(x.buffer, x.byteOffset, x.byteLength).equals(Buffer.from(y.buffer, y.byteOffset, y.byteLength)))
      return false;
  }
  return true;
}

export class AuxPipeline {
  private readonly images: Uint8Array[] = [];
  private dispatched = 0;
  private readonly parts: Promise<AuxAnalysis[]>[] = [];
  private readonly ac = new AbortController();
  private readonly onAbort: () => void;

  /** `threads` must have threads (its `auxAnalyses` answers, never `null`). */
  constructor(
    private readonly threads: MediaThreads,
    private readonly signal: AbortSignal,
    private readonly partSize = AUX_MIN_PER_WORKER,
  ) {
    this.onAbort = () => this.ac.abort(signal.reason);
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** The video's next aux JPEG (`onAux` of the video run). */
  readonly add = (jpeg: Uint8Array): void => {
    this.images.push(jpeg);
    if (this.images.length - this.dispatched >= this.partSize) this.dispatch(this.images.slice(this.dispatched));
  };

  private dispatch(images: Uint8Array[]): void {
    this.dispatched += images.length;
    const part = this.threads.auxAnalyses(images, this.ac.signal).then((a) => a ?? []);
    part.catch(() => undefined); // met in finish(), or dropped with the job
    this.parts.push(part);
  }

  /** The analyses of `images`, the job's reassembled aux JPEGs, in order. */
  async finish(images: Uint8Array[]): Promise<AuxAnalysis[]> {
    try {
      if (!sameImages(this.images, images)) {
        this.ac.abort(new Error('aux images differ from the packets'));
        return (await this.threads.auxAnalyses(images, this.signal)) ?? [];
      }
      if (this.dispatched < images.length) this.dispatch(images.slice(this.dispatched));
      return (await Promise.all(this.parts)).flat();
    } finally {
      this.signal.removeEventListener('abort', this.onAbort);
    }
  }

  /** The video failed: stops the parts under way. */
  cancel(): void {
    this.signal.removeEventListener('abort', this.onAbort);
    this.ac.abort(new Error('the video job ended'));
  }
}
