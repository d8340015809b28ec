/**
 * Presign and PUT {uploadUrl} (spec: Endpoints; Upload; Limits): kinds, content types, defaults,
 * maxBytes, the URL as the only credential (bound to key, kind, content type, 15 min), streaming with
 * the size limit enforced while streaming, the hash computed while writing, the object TTL sweep.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FRAMES_MAX_BYTES, VIDEO_MAX_BYTES } from '@vitals/protocol';
import { createBatchWorld, json, pathOf, presign, put, sha256, type BatchWorld, ManualClock } from './batch-world.js';
import { sweepOnce } from '../src/batch/index.js';

let w: BatchWorld;
beforeAll(async () => {
  w = await createBatchWorld();
});
afterAll(async () => w.close());

describe('presign', () => {
  test.each([
    [{ kind: 'frames' }, 'application/octet-stream', FRAMES_MAX_BYTES],
    [{ kind: 'video' }, 'video/mp4', VIDEO_MAX_BYTES],
    [{ kind: 'video', contentType: 'video/quicktime' }, 'video/quicktime', VIDEO_MAX_BYTES],
    [{ kind: 'video', contentType: 'video/webm' }, 'video/webm', VIDEO_MAX_BYTES],
    [{ kind: 'frames', contentType: 'application/octet-stream' }, 'application/octet-stream', FRAMES_MAX_BYTES],
  ])('%j → %s, maxBytes %i', async (body, ct, max) => {
    const now = w.clock.now();
    const d = await presign(w, body);
    expect(Object.keys(d).sort()).toEqual(['contentType', 'expiresAt', 'maxBytes', 'objectKey', 'uploadUrl']);
    expect(d.objectKey).toMatch(/^up_[0-9a-f]{32}$/);
    expect(d.contentType).toBe(ct);
    expect(d.maxBytes).toBe(max);
    // CLARIFICATIONS 18: expiresAt is when the URL stops working (15 minutes).
    expect(d.expiresAt).toBe(now + 900_000);
  });

  test.each([
    [{ kind: 'frames', contentType: 'video/mp4' }, 'invalid_content_type'],
    [{ kind: 'video', contentType: 'application/octet-stream' }, 'invalid_content_type'],
    [{ kind: 'video', contentType: 'image/png' }, 'invalid_content_type'],
    [{ kind: 'audio' }, 'invalid_kind'],
    [{}, 'invalid_kind'],
  ])('%j → 400 %s', async (body, code) => {
    const res = await w.call({ method: 'POST', url: '/sdk/v1/cloud/uploads/presign', body });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe(code);
  });

  test('unsigned presign is 401', async () => {
    const res = await w.app.inject({
      method: 'POST',
      url: '/sdk/v1/cloud/uploads/presign',
      payload: { kind: 'frames' },
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('PUT {uploadUrl}', () => {
  test('stores the bytes and their SHA-256', async () => {
    const up = await presign(w);
    const bytes = new Uint8Array(100_000).map((_, i) => i % 251);
    const res = await put(w, up.uploadUrl, bytes);
    expect(res.statusCode).toBe(200);
    expect(json(res).data).toEqual({ objectKey: up.objectKey, size: bytes.length, sha256: sha256(bytes) });
    expect(await w.rt.objects.readBytes(up.objectKey)).toEqual(Buffer.from(bytes));
  });

  test('a second PUT before any job replaces the object', async () => {
    const up = await presign(w);
    await put(w, up.uploadUrl, new Uint8Array([1, 2, 3]));
    const res = await put(w, up.uploadUrl, new Uint8Array([4, 5]));
    expect(json(res).data.size).toBe(2);
  });

  test('wrong Content-Type → 400 invalid_content_type, nothing stored', async () => {
    const up = await presign(w, { kind: 'video', contentType: 'video/webm' });
    const res = await put(w, up.uploadUrl, new Uint8Array(10), 'video/mp4');
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('invalid_content_type');
    expect(await w.rt.objects.stat(up.objectKey)).toBeUndefined();
  });

  test('over the kind limit → 413 object_too_large, enforced while streaming (no Content-Length)', async () => {
    const up = await presign(w);
    const url = new URL(up.uploadUrl);
    // Chunked body without a Content-Length, so only the streaming count can stop it.
    await w.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (w.app.server.address() as { port: number }).port;
    const chunk = Buffer.alloc(1 << 20, 7);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent > FRAMES_MAX_BYTES + (4 << 20)) return c.close();
        sent += chunk.length;
        c.enqueue(chunk);
      },
    });
    const res = await fetch(`http://127.0.0.1:${port}${url.pathname}${url.search}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body,
      duplex: 'half',
    } as RequestInit).catch((e: Error) => e);
    if (!(res instanceof Error)) {
      expect(res.status).toBe(413);
      const b = await res.json();
      expect(b.error.code).toBe('object_too_large');
      expect(JSON.stringify(b)).not.toContain(url.searchParams.get('sig')!);
    }
    expect(await w.rt.objects.stat(up.objectKey)).toBeUndefined();
  });

  test('a declared Content-Length over the limit is refused before reading', async () => {
    const up = await presign(w);
    const res = await w.app.inject({
      method: 'PUT',
      url: pathOf(up.uploadUrl),
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(FRAMES_MAX_BYTES + 1) },
      payload: Buffer.alloc(10),
    });
    expect(res.statusCode).toBe(413);
    expect(json(res).error.code).toBe('object_too_large');
  });

  test.each([
    ['tampered signature', (u: URL) => u.searchParams.set('sig', 'A'.repeat(43))],
    ['other content type', (u: URL) => u.searchParams.set('ct', 'video/mp4')],
    ['other kind', (u: URL) => u.searchParams.set('kind', 'video')],
    ['later expiry', (u: URL) => u.searchParams.set('exp', String(Number(u.searchParams.get('exp')) + 1))],
    ['other object', (u: URL) => (u.pathname = u.pathname.replace(/up_[0-9a-f]{4}/, 'up_ffff'))],
    ['no signature', (u: URL) => u.searchParams.delete('sig')],
  ])('%s → 401, and the URL is not echoed', async (_name, mutate) => {
    const up = await presign(w);
    const u = new URL(up.uploadUrl);
    mutate(u);
    const res = await w.app.inject({
      method: 'PUT',
      url: `${u.pathname}${u.search}`,
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(4),
    });
    expect(res.statusCode).toBe(401);
    expect(json(res).error.code).toBe('unauthorized');
    expect(res.body).not.toContain('sig=');
    expect(res.body).not.toContain(new URL(up.uploadUrl).searchParams.get('sig')!);
  });

  test('the URL stops working after 15 minutes', async () => {
    const up = await presign(w);
    (w.clock as ManualClock).advance(900_001);
    const res = await put(w, up.uploadUrl, new Uint8Array(4));
    expect(res.statusCode).toBe(401);
    expect(json(res).error.message).toMatch(/expired/);
  });
});

describe('object TTL', () => {
  test('an object is swept 1 hour after presign whatever happened to it', async () => {
    const up = await presign(w);
    await put(w, up.uploadUrl, new Uint8Array([9, 9, 9]));
    (w.clock as ManualClock).advance(3_599_000);
    await sweepOnce(w.ctx, w.rt);
    expect(await w.rt.objects.stat(up.objectKey)).toBeDefined();
    (w.clock as ManualClock).advance(2_000);
    await sweepOnce(w.ctx, w.rt);
    expect(await w.rt.objects.stat(up.objectKey)).toBeUndefined();
    const row = await w.ctx.db.db
      .selectFrom('uploads')
      .selectAll()
      .where('object_key', '=', up.objectKey)
      .executeTakeFirstOrThrow();
    expect(row.deleted_at).not.toBeNull();
  });
});
