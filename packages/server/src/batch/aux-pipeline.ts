/**
 * A video job's emotion and gaze analysed while its face is still being followed (docs/media.md,
 * "Worker threads"): the video worker hands out each aux JPEG as it encodes it, and parts of
 * AUX_MIN_PER_WORKER images go to the video pool at once, where an idle worker (the second core)
 * analyses them beside the tracking. At the end the images handed out must be the job's aux images
 * (the type-4 chunks of its packets, reassembled) byte for byte; then the parts' analyses, in order,
 * are the answer, else those images are analysed again from the packets. Parts start at group
 * boundaries of the aux series (AUX_MIN_PER_WORKER is a multiple of AUX_GROUP), and an image's
 * analysis depends only on itself and its group's first image, so how the images were split does
 * not change an analysis. At most AUX_PARTS_IN_FLIGHT parts of a job wait or run at a time: a long video
 * hands out images faster than one worker analyses them, and parts without a bound would fill the
 * pool's queue (a bounded one: past it tasks are refused) when several such jobs run at once; the
 * images beyond wait here and go with the rest when the video ends.
 */
import { AUX_GROUP, type AuxAnalysis, type AuxWant } from '@vitals/media/threads';
import { AUX_MIN_PER_WORKER, type MediaThreads } from './media-threads.js';

/** Parts of one job waiting for or running on the video pool at a time. */
export const AUX_PARTS_IN_FLIGHT = 2;

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
  private inFlight = 0;
  private finishing = false;
  private readonly parts: Promise<AuxAnalysis[]>[] = [];
  private readonly ac = new AbortController();
  private readonly onAbort: () => void;

  private readonly partSize: number;
  private readonly maxInFlight: number;
  private readonly want: AuxWant | undefined;

  /**
   * `threads` must have threads (its `auxAnalyses` answers, never `null`). `want`: what the job
   * ordered (default both); `partSize` and `maxInFlight` for tests.
   */
  constructor(
    private readonly threads: MediaThreads,
    private readonly signal: AbortSignal,
    opts: { want?: AuxWant; partSize?: number; maxInFlight?: number } = {},
  ) {
    const partSize = (this.partSize = opts.partSize ?? AUX_MIN_PER_WORKER);
    this.maxInFlight = opts.maxInFlight ?? AUX_PARTS_IN_FLIGHT;
    this.want = opts.want;
    if (partSize % AUX_GROUP !== 0) throw new RangeError(`aux part size ${partSize} is not a multiple of ${AUX_GROUP}`);
    this.onAbort = () => this.ac.abort(signal.reason);
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** The video's next aux JPEG (`onAux` of the video run). */
  readonly add = (jpeg: Uint8Array): void => {
    this.images.push(jpeg);
    this.pump();
  };

  /** Sends the next whole parts, in order, while fewer than maxInFlight are out. */
  private pump(): void {
    while (!this.finishing && this.inFlight < this.maxInFlight && this.images.length - this.dispatched >= this.partSize)
      this.dispatch(this.images.slice(this.dispatched, this.dispatched + this.partSize));
  }

  private dispatch(images: Uint8Array[]): void {
    this.dispatched += images.length;
    this.inFlight++;
    const part = this.threads.auxAnalyses(images, this.ac.signal, this.want).then((a) => a ?? []);
    part.then(
      () => {
        this.inFlight--;
        this.pump();
      },
      () => this.inFlight--, // met in finish(), or dropped with the job
    );
    this.parts.push(part);
  }

  /** The analyses of `images`, the job's reassembled aux JPEGs, in order. */
  async finish(images: Uint8Array[]): Promise<AuxAnalysis[]> {
    this.finishing = true;
    try {
      if (!sameImages(this.images, images)) {
        this.ac.abort(new Error('aux images differ from the packets'));
        return (await this.threads.auxAnalyses(images, this.signal, this.want)) ?? [];
      }
      if (this.dispatched < images.length) this.dispatch(images.slice(this.dispatched));
      return (await Promise.all(this.parts)).flat();
    } finally {
      this.signal.removeEventListener('abort', this.onAbort);
    }
  }

  /** The video failed: stops the parts under way. */
  cancel(): void {
    this.finishing = true;
    this.signal.removeEventListener('abort', this.onAbort);
    this.ac.abort(new Error('the video job ended'));
  }
}
