/**
 * A scripted stand-in for the streaming tier and the session fallback endpoints, used until the
 * real server has them (and to force failures the real one will not produce on demand).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { decodeFramesFile } from '@vitals/protocol';

export interface FakeOptions {
  /** Close the socket (code 1011) after this many binary packets. */
  dropAfterPackets?: number;
  /** After this many binary packets, send a fatal `frame_rate_exceeded` error and close. */
  fatalAfterPackets?: number;
  /** Answer hello with this fatal error instead of ready. */
  helloError?: string;
  /** Polls of /result that answer `running` before `completed`. */
  pendingPolls?: number;
}

export interface FakeServer {
  baseUrl: string;
  wsUrl: string;
  /** Messages the socket received: strings for control, byte lengths for binary. */
  received: Array<string | number>;
  uploads: Array<{ auth: string | undefined; contentType: string | undefined; packets: number; ok: boolean }>;
  resultPolls: number;
  connections: number;
  close(): Promise<void>;
}

const measurement = { id: 'meas_000000000000000000000001', origin: 'cloud', attested: true, source: 'web' };

export async function startFakeStreamServer(opts: FakeOptions = {}): Promise<FakeServer> {
  const state = {
    received: [] as Array<string | number>,
    uploads: [] as FakeServer['uploads'],
    resultPolls: 0,
    connections: 0,
  };
  let uploaded = false;
  const http: Server = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const send = (status: number, data: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_fake' });
      res.end(JSON.stringify(status < 300 ? { ok: true, data } : { ok: false, error: data }));
    };
    if (req.headers.authorization !== 'Bearer tok_1') return send(401, { code: 'token_invalid', message: 'bad token' });
    if (req.method === 'POST' && req.url === '/sdk/v1/cloud/sessions/cj_1/frames') {
      const decoded = decodeFramesFile(new Uint8Array(body));
      state.uploads.push({
        auth: req.headers.authorization,
        contentType: req.headers['content-type'],
        packets: decoded.ok ? decoded.packets.length : -1,
        ok: decoded.ok,
      });
      uploaded = true;
      return send(201, { jobId: 'cj_2', mode: 'batch_frames', status: 'queued', createdAt: Date.now() });
    }
    if (req.method === 'GET' && req.url === '/sdk/v1/cloud/sessions/cj_1/result') {
      state.resultPolls++;
      if (!uploaded) return send(200, { jobId: 'cj_1', mode: 'stream', status: 'aborted', createdAt: 0 });
      if (state.resultPolls <= (opts.pendingPolls ?? 1))
        return send(200, { jobId: 'cj_2', mode: 'batch_frames', status: 'running', createdAt: 0 });
      return send(200, {
        jobId: 'cj_2',
        mode: 'batch_frames',
        status: 'completed',
        createdAt: 0,
        measurementId: measurement.id,
        measurement,
      });
    }
    send(404, { code: 'not_found', message: 'no such route' });
  }
  const wss = new WebSocketServer({ server: http, path: '/sdk/v1/cloud/stream', perMessageDeflate: false });
  wss.on('connection', (ws: WebSocket) => {
    state.connections++;
    let packets = 0;
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        state.received.push((data as Buffer).length);
        packets++;
        if (packets === 1) ws.send(JSON.stringify({ t: 'hr', hr: 61, sqi: 0.9, tMs: 1000 }));
        if (opts.dropAfterPackets !== undefined && packets >= opts.dropAfterPackets) ws.terminate();
        if (opts.fatalAfterPackets !== undefined && packets === opts.fatalAfterPackets) {
          ws.send(JSON.stringify({ t: 'error', code: 'frame_rate_exceeded', message: 'too fast', fatal: true }));
          ws.close(1008);
        }
        return;
      }
      const text = data.toString();
      state.received.push(text);
      const m = JSON.parse(text) as { t: string; token?: string };
      if (m.t === 'hello') {
        if (opts.helloError) {
          ws.send(JSON.stringify({ t: 'error', code: opts.helloError, message: 'no', fatal: true }));
          ws.close(1008);
          return;
        }
        ws.send(JSON.stringify({ t: 'ready', sessionId: 'cj_1', acceptedFeatures: ['hrv', 'bp'] }));
      } else if (m.t === 'ping') ws.send(JSON.stringify({ t: 'pong' }));
      else if (m.t === 'stop') {
        ws.send(JSON.stringify({ t: 'final', measurementId: measurement.id, measurement }));
        ws.close(1000);
      } else if (m.t === 'abort') ws.close(1000);
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const port = (http.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/sdk/v1/cloud/stream`,
    get received() {
      return state.received;
    },
    get uploads() {
      return state.uploads;
    },
    get resultPolls() {
      return state.resultPolls;
    },
    get connections() {
      return state.connections;
    },
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
