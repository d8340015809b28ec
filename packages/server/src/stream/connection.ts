/**
 * One streaming socket's inbound path (spec: Streaming protocol; CLARIFICATIONS 26, 27): reads each
 * message, checks its size and form, decides what it asks for and asks the session (session.ts),
 * which owns every piece of state and the socket's way out. The per-frame hot path is a decode
 * here and one call there. The class is internal to this folder (index.ts exports the hub only).
 */
import { parseUntrustedJson } from '../json.js';
import type { WebSocket } from 'ws';
import { WS_MAX_MESSAGE_BYTES, decodePacket, isFaceCropPacket, isPacketError } from '@vitals/protocol';
import { CLOSE } from './limits.js';
import { SessionSocket } from './session-socket.js';
import { StreamSession, type SessionDeps } from './session.js';

export class StreamConnection {
  readonly session: StreamSession;

  constructor(ws: WebSocket, deps: SessionDeps) {
    const session = (this.session = new StreamSession(new SessionSocket(ws), deps));
    ws.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    // A message over ws's hard cap is refused from its frame header, and ws then closes (1009)
    // before its own 'error' event, too late to send anything. Its receiver reports first: the
    // spec's fatal error event goes out there, ahead of the close frame (issue 19, defect 3).
    const receiver = (ws as unknown as { _receiver?: import('node:events').EventEmitter })._receiver;
    receiver?.prependListener('error', (err: Error & { code?: string }) => {
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH')
        session.fatal('protocol_error', `message exceeds ${WS_MAX_MESSAGE_BYTES} bytes`, CLOSE.tooBig);
    });
    // ws refused a frame (over its hard cap, bad UTF-8, bad opcode) and is closing the socket.
    ws.on('error', (err) => session.socketFailed(err.message));
    ws.on('close', () => session.socketClosed());
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    const s = this.session;
    if (s.phase === 'closed') return;
    if (data.length > WS_MAX_MESSAGE_BYTES) {
      s.fatal('protocol_error', `message of ${data.length} bytes exceeds ${WS_MAX_MESSAGE_BYTES}`, CLOSE.tooBig);
      return;
    }
    if (s.phase === 'finishing') return; // frames in flight after stop are ignored
    if (isBinary) this.onBinary(data);
    else this.onText(data);
  }

  private onText(data: Buffer): void {
    const s = this.session;
    let msg: any;
    try {
      msg = parseUntrustedJson(data.toString('utf8'));
    } catch {
      s.fatal('protocol_error', 'control message is not valid JSON', CLOSE.protocol);
      return;
    }
    const t = msg && typeof msg === 'object' ? msg.t : undefined;
    if (s.phase !== 'running') {
      // CLARIFICATIONS 27: before `ready`, only one `hello` is allowed.
      if (s.phase === 'hello' && t === 'hello') void s.hello(msg);
      else
        s.fatal(
          'protocol_error',
          s.phase === 'hello' ? 'the first message must be hello' : 'wait for ready',
          CLOSE.protocol,
        );
      return;
    }
    switch (t) {
      case 'ping':
        s.send({ t: 'pong' });
        return;
      case 'stop':
        void s.finish('stop');
        return;
      case 'abort':
        s.abort(typeof msg.reason === 'string' ? msg.reason.slice(0, 200) : '');
        return;
      default:
        s.fatal(
          'protocol_error',
          t === 'hello' ? 'hello sent twice' : `unknown control message ${JSON.stringify(String(t)).slice(0, 40)}`,
          CLOSE.protocol,
        );
    }
  }

  private onBinary(data: Buffer): void {
    const s = this.session;
    if (s.phase !== 'running') {
      s.fatal('protocol_error', 'binary packet before ready', CLOSE.protocol);
      return;
    }
    const wall = performance.now();
    if (!s.admitMessage(wall)) return;
    // The per-frame path: a well-formed face crop is read in place (the queue copies what it keeps).
    if (isFaceCropPacket(data)) return s.faceCrop(data, wall);
    const p = decodePacket(data);
    if (isPacketError(p)) {
      s.fatal('protocol_error', p.error, CLOSE.protocol);
      return;
    }
    if (p.type === 1)
      s.faceCrop(data, wall); // not reached: every well-formed type 1 passed above
    else s.packet(p);
  }
}
