/**
 * Refusals made below the routes (issue 19, defect 5): Fastify's own (a path that is not valid
 * percent-encoding, a path parameter over 200 characters) and Node's HTTP parser's (headers over
 * 16 KB, a bare LF or a NUL in a header). Each carries the failure envelope and an X-Request-Id
 * (spec: "Every response carries an X-Request-Id header"). Raw sockets: clients refuse to send these.
 */
import net from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../src/testing.js';

let srv: TestServer;
let port: number;
beforeAll(async () => {
  srv = await startTestServer();
  port = Number(new URL(srv.baseUrl).port);
});
afterAll(() => srv.close());

/** Sends `raw` and reads until the server closes or answers in full. */
async function send(raw: Buffer | string): Promise<{ status: number; headers: Record<string, string>; body: any }> {
  const s = net.connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  s.on('data', (d) => chunks.push(d));
  s.write(raw);
  await new Promise<void>((resolve) => {
    s.on('close', () => resolve());
    s.on('error', () => resolve());
    s.on('data', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const len = /content-length: (\d+)/i.exec(text);
      if (end >= 0 && len && text.length >= end + 4 + Number(len[1])) s.destroy();
    });
  });
  const text = Buffer.concat(chunks).toString('utf8');
  const [head, ...rest] = text.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n')) };
}

const get = (path: string, extra = ''): string => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`;

test.each([
  ['a path that is not valid percent-encoding', get('/sdk/v1/measurements/%ff'), 400, 'validation_error'],
  ['a path parameter of 600 characters', get(`/sdk/v1/measurements/${'a'.repeat(600)}`), 404, 'not_found'],
  ['headers over 16 KB', get('/health', `X-Big: ${'a'.repeat(17_000)}\r\n`), 431, 'headers_too_large'],
  ['a bare LF in a header', `GET /health HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n`, 400, 'validation_error'],
  ['a NUL in a header value', `GET /health HTTP/1.1\r\nHost: x\r\nX-A: b\u0000c\r\n\r\n`, 400, 'validation_error'],
  ['a space in a header name', `GET /health HTTP/1.1\r\nHost: x\r\nX A: b\r\n\r\n`, 400, 'validation_error'],
  ['not HTTP at all', 'HELLO\r\n\r\n', 400, 'validation_error'],
])('%s → %i %s, with the envelope and X-Request-Id', async (_name, raw, status, code) => {
  const res = await send(raw);
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ ok: false, error: { code, message: expect.any(String) } });
  expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
});
