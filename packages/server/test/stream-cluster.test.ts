/**
 * "One connection per token" holds across server processes (ARCHITECTURE: the only shared state is
 * the database). Two independent servers — each its own app, hub and connections — on one database.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/deps.js';
import { buildServer } from '../src/server.js';
import { openTestDatabase, makeKey, waitFor, type TestServer } from '../src/testing.js';
import type { AppContext } from '../src/context.js';
import type { FastifyInstance } from 'fastify';
import { TestClient, createSession, settledJob } from './stream-helpers.js';

interface Node {
  app: FastifyInstance;
  ctx: AppContext;
  baseUrl: string;
}

let store: Awaited<ReturnType<typeof openTestDatabase>>;
let a: Node;
let b: Node;

async function node(migrate: boolean): Promise<Node> {
  const config = loadConfig({ VITALS_DATA_DIR: store.dataDir });
  const ctx = await createContext(config, { db: store.db, migrate });
  const { app } = await buildServer(ctx);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  const baseUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  ctx.publicUrl = baseUrl;
  return { app, ctx, baseUrl };
}

beforeAll(async () => {
  store = await openTestDatabase();
  a = await node(true);
  b = await node(false);
});
afterAll(async () => {
  for (const n of [a, b]) {
    await n.app.close();
    for (const fn of n.ctx.onClose.splice(0)) await fn();
  }
  await store.cleanup();
});

const asServer = (n: Node) => ({ ...n, clock: n.ctx.clock }) as unknown as TestServer;

describe('two servers, one database', () => {
  test('a token minted on A and used on A cannot be used on B', async () => {
    const key = await makeKey(a.ctx);
    const s = await createSession(asServer(a), key);
    const { c } = await TestClient.ready(s.wsUrl, s.sessionToken);
    const other = await TestClient.connect(
      s.wsUrl.replace(a.baseUrl.replace('http', 'ws'), b.baseUrl.replace('http', 'ws')),
    );
    other.json({ t: 'hello', protocol: 1, token: s.sessionToken });
    expect((await other.fatal()).error.code).toBe('session_already_used');
    c.json({ t: 'abort' });
    expect(await settledJob(asServer(a), s.sessionId)).toMatchObject({ status: 'aborted' });
  });

  test('simultaneous hellos on both servers: exactly one ready', async () => {
    const key = await makeKey(a.ctx);
    for (let round = 0; round < 5; round++) {
      const s = await createSession(asServer(b), key);
      const wsA = `${a.baseUrl.replace('http', 'ws')}/sdk/v1/cloud/stream`;
      const wsB = `${b.baseUrl.replace('http', 'ws')}/sdk/v1/cloud/stream`;
      const clients = await Promise.all([
        TestClient.connect(wsA),
        TestClient.connect(wsB),
        TestClient.connect(wsA),
        TestClient.connect(wsB),
      ]);
      for (const c of clients) c.json({ t: 'hello', protocol: 1, token: s.sessionToken });
      const answered = (c: TestClient) => c.events.some((e) => e.t === 'ready' || e.t === 'error');
      await waitFor(() => clients.every(answered), { what: 'an answer to every hello' });
      expect(clients.filter((c) => c.events.some((e) => e.t === 'ready'))).toHaveLength(1);
      expect(clients.filter((c) => c.events.some((e) => e.code === 'session_already_used'))).toHaveLength(3);
      for (const c of clients) c.close();
    }
  });
});
