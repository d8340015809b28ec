/**
 * Node uploader: streams the body with a Content-Length (no chunked encoding, no whole-file copy)
 * and reports progress as bytes are flushed. The URL is never put in an error.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { NetworkError, VitalsError } from '../core/errors.js';
import { sizeOf, uploadFailure, type PutRequest, type StreamSource, type Uploader } from '../core/http/upload.js';

const CHUNK = 256 * 1024;

async function* chunksOf(body: PutRequest['body']): AsyncIterable<Uint8Array> {
  if (body instanceof Uint8Array) {
    for (let at = 0; at < body.length; at += CHUNK) yield body.subarray(at, Math.min(body.length, at + CHUNK));
  } else if (typeof (body as StreamSource).stream === 'function' && !(body instanceof Blob)) {
    yield* (body as StreamSource).stream();
  } else {
    const reader = (body as Blob).stream().getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  }
}

export const nodeUploader: Uploader = (req) =>
  new Promise<void>((resolve, reject) => {
    const url = new URL(req.url);
    const total = sizeOf(req.body);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const r = send(url, {
      method: 'PUT',
      headers: { 'content-type': req.contentType, 'content-length': String(total) },
      signal: req.signal,
    });
    r.on('error', (err: NodeJS.ErrnoException) => {
      if (req.signal?.aborted) return reject(new VitalsError('aborted', 'upload aborted'));
      reject(new NetworkError(`upload failed: ${err.code ?? err.name}`));
    });
    r.on('response', (res) => {
      const parts: Uint8Array[] = [];
      res.on('data', (c: Uint8Array) => parts.push(c));
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) return resolve();
        const text = new TextDecoder().decode(Buffer.concat(parts));
        const requestId = res.headers['x-request-id'];
        void uploadFailure(status, text, typeof requestId === 'string' ? requestId : undefined).then(reject);
      });
    });
    void (async () => {
      let loaded = 0;
      req.onProgress?.({ loaded, total });
      try {
        for await (const chunk of chunksOf(req.body)) {
          await new Promise<void>((ok, fail) => r.write(chunk, (err) => (err ? fail(err) : ok())));
          loaded += chunk.byteLength;
          req.onProgress?.({ loaded, total });
        }
        r.end();
      } catch (err) {
        r.destroy(err instanceof Error ? err : new Error(String(err)));
      }
    })();
  });
