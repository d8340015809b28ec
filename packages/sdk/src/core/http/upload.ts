/**
 * The presigned PUT (spec: `PUT {uploadUrl}`): raw bytes with the declared Content-Type, not
 * signed. The URL is a credential, so no message, log line or error here ever contains it.
 */
import { ApiError, NetworkError, VitalsError, codeForStatus } from '../errors.js';
import type { FetchLike } from './transport.js';

/** What can be uploaded: bytes, a browser `Blob`/`File`, or a sized stream (Node file helper). */
export type UploadBody = Uint8Array | Blob | StreamSource;

export interface StreamSource {
  size: number;
  stream(): AsyncIterable<Uint8Array>;
}

export interface UploadProgress {
  loaded: number;
  total: number;
}

export interface PutRequest {
  url: string;
  body: UploadBody;
  contentType: string;
  onProgress?: (p: UploadProgress) => void;
  signal?: AbortSignal;
}

/** Performs one PUT; the default picks XMLHttpRequest (real progress) or fetch. */
export type Uploader = (req: PutRequest, fetch: FetchLike) => Promise<void>;

export function sizeOf(body: UploadBody): number {
  if (body instanceof Uint8Array) return body.byteLength;
  return (body as { size: number }).size;
}

function isStreamSource(body: UploadBody): body is StreamSource {
  return !(body instanceof Uint8Array) && typeof (body as StreamSource).stream === 'function' && !isBlob(body);
}

function isBlob(body: unknown): body is Blob {
  return typeof Blob !== 'undefined' && body instanceof Blob;
}

async function collect(source: StreamSource): Promise<Uint8Array> {
  const out = new Uint8Array(source.size);
  let at = 0;
  for await (const chunk of source.stream()) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return at === out.length ? out : out.subarray(0, at);
}

/** Turns a failed PUT into an `ApiError` from its envelope, never mentioning the URL. */
export async function uploadFailure(status: number, text: string, requestId?: string): Promise<ApiError> {
  let code = codeForStatus(status);
  let message = `upload refused with HTTP ${status}`;
  try {
    const env = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (env.error?.code) code = env.error.code;
    if (env.error?.message) message = env.error.message;
  } catch {
    // not an envelope: keep the status-derived code
  }
  return new ApiError({ code, message, status, requestId });
}

export const fetchUploader: Uploader = async (req, fetch) => {
  const total = sizeOf(req.body);
  req.onProgress?.({ loaded: 0, total });
  const body = isStreamSource(req.body) ? await collect(req.body) : req.body;
  let res: Response;
  try {
    res = await fetch(req.url, {
      method: 'PUT',
      headers: { 'content-type': req.contentType },
      body: body as BodyInit,
      signal: req.signal,
    });
  } catch (err) {
    if (req.signal?.aborted) throw err;
    throw new NetworkError('upload failed: the storage address could not be reached', { cause: stripUrl(err) });
  }
  const text = await res.text();
  if (!res.ok) throw await uploadFailure(res.status, text, res.headers.get('x-request-id') ?? undefined);
  req.onProgress?.({ loaded: total, total });
};

/** Browser path with upload progress events. */
export const xhrUploader: Uploader = async (req) => {
  const body = isStreamSource(req.body) ? await collect(req.body) : req.body;
  const total = sizeOf(req.body);
  await new Promise<void>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', req.url);
    xhr.setRequestHeader('content-type', req.contentType);
    xhr.upload.onprogress = (e) => req.onProgress?.({ loaded: e.loaded, total: e.lengthComputable ? e.total : total });
    xhr.onerror = () => reject(new NetworkError('upload failed: the storage address could not be reached'));
    xhr.onabort = () => reject(new VitalsError('aborted', 'upload aborted'));
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        req.onProgress?.({ loaded: total, total });
        resolve();
      } else {
        void uploadFailure(xhr.status, xhr.responseText, xhr.getResponseHeader('x-request-id') ?? undefined).then(
          reject,
        );
      }
    };
    req.signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(body as XMLHttpRequestBodyInit);
  });
};

/** The core default: XHR in a browser (progress), fetch elsewhere. */
export const defaultUploader: Uploader = (req, fetch) =>
  typeof XMLHttpRequest !== 'undefined' ? xhrUploader(req, fetch) : fetchUploader(req, fetch);

/** Errors thrown by fetch can quote the URL: keep only the error's class and code. */
function stripUrl(err: unknown): unknown {
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code ?? (err.cause as { code?: unknown } | undefined)?.code;
  return new Error(`${err.name}${typeof code === 'string' ? ` ${code}` : ''}`);
}
