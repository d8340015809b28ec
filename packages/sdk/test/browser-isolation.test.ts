/**
 * The browser entry must work with no Node APIs reachable. The entry is bundled for the browser
 * platform (a Node built-in or the `ws` package anywhere in its import graph fails the build), then
 * run in a bare `vm` context that has only what a browser offers (fetch, WebCrypto, TextEncoder,
 * WebSocket...) and no `process`, `Buffer` or `require`.
 */
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';

const entry = fileURLToPath(new URL('../src/index.ts', import.meta.url));
let code = '';

beforeAll(async () => {
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'VitalsSDK',
    conditions: ['source'],
    write: false,
    logLevel: 'silent',
  });
  code = out.outputFiles[0].text;
}, 60_000);

function browserRealm(extra: Record<string, unknown> = {}) {
  const ctx = vm.createContext({
    crypto: globalThis.crypto,
    TextEncoder,
    TextDecoder,
    URL,
    URLSearchParams,
    Headers,
    Response,
    console,
    setTimeout,
    clearTimeout,
    performance,
    ...extra,
  });
  vm.runInContext(code, ctx);
  return ctx as Record<string, any>;
}

describe('browser entry', () => {
  it('bundles for the browser without any Node built-in or the ws package', () => {
    expect(code.length).toBeGreaterThan(1000);
    expect(code).not.toMatch(/require\(["'](node:|ws|fs|crypto|buffer|stream|http)/);
  });

  it('has no Node globals in its realm, and still signs, writes frames and verifies webhooks', async () => {
    const seen: { headers: Record<string, string> }[] = [];
    const fetch = async (_url: string, init: { headers: Record<string, string> }) => {
      seen.push({ headers: init.headers });
      return new Response(JSON.stringify({ ok: true, data: { keyId: 'k', serverTime: Date.now() } }), { status: 200 });
    };
    const realm = browserRealm({ fetch });
    expect(vm.runInContext('typeof process + typeof Buffer + typeof require', realm)).toBe(
      'undefinedundefinedundefined',
    );
    const sdk = realm.VitalsSDK;
    const client = new sdk.VitalsClient({ keyId: 'k', secret: 's', baseUrl: 'https://api.example', fetch });
    const facts = await client.auth.test();
    expect(facts.keyId).toBe('k');
    expect(seen[0].headers['x-signature']).toMatch(/^[A-Za-z0-9+/]+=*$/);

    const w = new sdk.FramesWriter();
    w.addFaceCrop({ pixels: new Uint8Array(3888), tMicros: 0 });
    expect(sdk.readFramesFile(w.toBytes()).header.packetCount).toBe(1);

    const signed = await sdk.signWebhook({
      kind: 'org',
      webhookId: 'whe_1',
      secret: 'whsec_x',
      path: '/h',
      payload: { id: 'whd_1' },
    });
    const d = await sdk.verifyOrgWebhook({
      rawBody: signed.body,
      headers: signed.headers,
      path: '/h',
      secret: 'whsec_x',
    });
    expect(d.id).toBe('whd_1');
  });

  it('StreamSession uses the global WebSocket: hello with the token first, packets after ready', async () => {
    const sent: unknown[] = [];
    class FakeWebSocket {
      readyState = 0;
      bufferedAmount = 0;
      binaryType = 'blob';
      onopen: ((e: unknown) => void) | null = null;
      onmessage: ((e: { data: unknown }) => void) | null = null;
      onclose: ((e: unknown) => void) | null = null;
      onerror: ((e: unknown) => void) | null = null;
      constructor(readonly url: string) {
        setTimeout(() => {
          this.readyState = 1;
          this.onopen?.({});
        }, 1);
      }
      send(data: unknown) {
        sent.push(data);
        if (typeof data !== 'string') return;
        const m = JSON.parse(data) as { t: string };
        const reply = (o: unknown) => setTimeout(() => this.onmessage?.({ data: JSON.stringify(o) }), 1);
        if (m.t === 'hello') reply({ t: 'ready', sessionId: 'cj_1', acceptedFeatures: ['hrv'] });
        if (m.t === 'stop') reply({ t: 'final', measurementId: 'meas_1', measurement: { id: 'meas_1' } });
      }
      close() {
        this.readyState = 3;
      }
    }
    const realm = browserRealm({ WebSocket: FakeWebSocket });
    const s = new realm.VitalsSDK.StreamSession({
      session: { sessionToken: 'tok', sessionId: 'cj_1', wsUrl: 'wss://api.example/sdk/v1/cloud/stream' },
      delivery: 'stream',
    });
    const ready = await s.start();
    expect(ready.acceptedFeatures).toEqual(['hrv']);
    s.sendFrame({ pixels: new Uint8Array(3888), tMicros: 0 });
    const final = await s.stop();
    expect(final.measurementId).toBe('meas_1');
    expect(JSON.parse(sent[0] as string)).toEqual({ t: 'hello', protocol: 1, token: 'tok' });
    expect((sent[1] as Uint8Array).length).toBe(3900);
    expect(JSON.parse(sent[2] as string)).toEqual({ t: 'stop' });
  });
});
