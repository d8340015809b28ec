/**
 * A client that goes away mid-body is not a storage outage (issue 19, defect 4): the log says the
 * client left, and `store unavailable` stays the signal of the store's own failures.
 */
import net from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createWorld, json, type World } from './helpers.js';

let w: World;
let port: number;
const lines: string[] = [];
beforeAll(async () => {
  w = await createWorld({ logger: { level: 'info', stream: { write: (l: string) => void lines.push(l) } } });
  await w.app.listen({ host: '127.0.0.1', port: 0 });
  port = (w.app.server.address() as net.AddressInfo).port;
});
afterAll(() => w.close());

/** Sends the head and part of the body of `path`, then resets the connection. */
async function cutShort(method: string, path: string, headers: Record<string, string>): Promise<void> {
  const s = net.connect(port, '127.0.0.1');
  await new Promise((r) => s.once('connect', r));
  const head = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1', 'content-length: 1000000'];
  for (const [k, v] of Object.entries(headers)) head.push(`${k}: ${v}`);
  s.write(`${head.join('\r\n')}\r\n\r\n`);
  s.write(Buffer.alloc(32_768, 7));
  await new Promise((r) => setTimeout(r, 100));
  s.resetAndDestroy();
}

async function logged(msg: RegExp): Promise<Array<Record<string, unknown>>> {
  for (let i = 0; i < 100; i++) {
    const found = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => msg.test(String(l.msg)));
    if (found.length) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  return [];
}

test.each([
  ['an upload (PUT uploadUrl)', 'upload'],
  ['a signed JSON call', 'signed'],
])('%s cut short by the client is logged as the client leaving, not as a store outage', async (_n, kind) => {
  lines.length = 0;
  if (kind === 'upload') {
    const res = await w.call({ method: 'POST', url: '/sdk/v1/cloud/uploads/presign', body: { kind: 'frames' } });
    const url = new URL(json(res).data.uploadUrl as string);
    await cutShort('PUT', `${url.pathname}${url.search}`, { 'content-type': 'application/octet-stream' });
  } else {
    await cutShort('POST', '/sdk/v1/measurements', { 'content-type': 'application/json' });
  }
  const left = await logged(/client disconnected/);
  expect(left).toHaveLength(1);
  expect(left[0]).toMatchObject({ level: 30, method: kind === 'upload' ? 'PUT' : 'POST' });
  expect(lines.join('\n')).not.toMatch(/store unavailable|unhandled error/);
  // No credential in the log: the upload URL's query never appears.
  expect(lines.join('\n')).not.toMatch(/sig=|expires=/);
});
