import { VitalsError } from '../errors.js';
import type { FetchLike, HttpClient } from '../http/transport.js';
import { sizeOf, type UploadBody, type Uploader, type UploadProgress } from '../http/upload.js';
import type { PresignInput, Upload } from '../types.js';

/** `/sdk/v1/cloud/uploads/presign` and the presigned PUT. */
export class Uploads {
  constructor(
    private readonly http: HttpClient,
    private readonly uploader: Uploader,
    private readonly fetch: FetchLike,
  ) {}

  /** A presigned upload slot. `uploadUrl` is a credential: never log it. */
  async presign(input: PresignInput, opts: { signal?: AbortSignal } = {}): Promise<Upload> {
    const res = await this.http.request<Upload>('POST', '/sdk/v1/cloud/uploads/presign', {
      json: input,
      signal: opts.signal,
    });
    return res.data;
  }

  /**
   * PUTs the bytes to `upload.uploadUrl` with the declared `Content-Type` (unsigned: the URL is the
   * credential). Refuses locally what the slot's `maxBytes` would refuse remotely.
   */
  async put(
    upload: Upload,
    body: UploadBody,
    opts: { onProgress?: (p: UploadProgress) => void; signal?: AbortSignal } = {},
  ): Promise<void> {
    const size = sizeOf(body);
    if (upload.maxBytes && size > upload.maxBytes) {
      throw new VitalsError(
        'object_too_large',
        `file is ${size} bytes; this upload accepts at most ${upload.maxBytes}`,
      );
    }
    await this.uploader(
      {
        url: upload.uploadUrl,
        body,
        contentType: upload.contentType,
        onProgress: opts.onProgress,
        signal: opts.signal,
      },
      this.fetch,
    );
  }
}
