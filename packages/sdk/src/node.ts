/**
 * `@vitals/sdk`, Node entry (chosen by the `node` export condition): the core, plus a `ws`-based
 * WebSocket (permessage-deflate off, as the spec requires), a streaming uploader with progress,
 * and file helpers.
 */
import WebSocket from 'ws';
import { VitalsClient as CoreVitalsClient, type VitalsClientOptions } from './core/client.js';
import { StreamSession as CoreStreamSession, type StreamSessionOptions } from './core/live/session.js';
import type { WebSocketFactory, WebSocketLike } from './core/live/socket.js';
import { nodeUploader } from './node/upload.js';

export * from './core/index.js';
export { nodeUploader } from './node/upload.js';
export { fileSource, readFramesFileFromDisk, sha256File, writeFramesFileToDisk } from './node/files.js';

/** `ws` client sockets: no compression (spec: permessage-deflate disabled on both ends). */
export const nodeWebSocketFactory: WebSocketFactory = (url) =>
  new WebSocket(url, { perMessageDeflate: false }) as unknown as WebSocketLike;

/** `VitalsClient` with Node defaults: uploads stream from disk with a Content-Length and progress. */
export class VitalsClient extends CoreVitalsClient {
  constructor(opts: VitalsClientOptions) {
    super({ ...opts, uploader: opts.uploader ?? (opts.fetch ? undefined : nodeUploader) });
  }
}

/** `StreamSession` with the `ws` package as its WebSocket. */
export class StreamSession extends CoreStreamSession {
  constructor(opts: StreamSessionOptions) {
    super({ ...opts, webSocket: opts.webSocket ?? nodeWebSocketFactory });
  }
}
