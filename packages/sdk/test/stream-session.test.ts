/**
 * StreamSession delivery modes against a scripted server (support/fake-stream-server.ts): the
 * wire order of the streaming protocol, live events, and the auto fallback through the session
 * endpoints. The same flows against the real server are in stream-real.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { StreamError, StreamSession, type StreamEvent } from '@vitals/sdk';
import { startFakeStreamServer, type FakeServer } from './support/fake-stream-server.js';

let fake: FakeServer | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const px = () => new Uint8Array(3888).fill(90);
const fastSleep = async () => undefined;

function session(f: FakeServer, delivery: 'stream' | 'batch' | 'auto', extra: Record<string, unknown> = {}) {
  return new StreamSession({
    session: { sessionToken: 'tok_1', sessionId: 'cj_1', wsUrl: f.wsUrl, maxDurationSec: 30 },
    delivery,
    sleep: fastSleep,
    resultPollMs: 1000,
    ...extra,
  });
}

describe('stream', () => {
  it('hello first, packets after ready, live events as emitter and iterator, ping, stop resolves with final', async () => {
    fake = await startFakeStreamServer();
    const s = session(fake, 'stream');
    const iterated: StreamEvent[] = [];
    const collecting = (async () => {
      for await (const e of s.events()) iterated.push(e);
    })();
    const hrs: number[] = [];
    s.on('hr', (e) => hrs.push(e.hr));
    const ready = await s.start();
    expect(ready?.acceptedFeatures).toEqual(['hrv', 'bp']);
    for (let i = 0; i < 5; i++) s.sendFrame({ pixels: px(), tMicros: i * 33_333 });
    s.sendTelemetry({
      tMicros: 1,
      leftEyeOpenness: 1,
      rightEyeOpenness: 1,
      jawOpenness: 0,
      yawDeg: 0,
      pitchDeg: 0,
      rollDeg: 0,
      faceWidthFraction: 0.3,
      meanBrightness: 0.5,
      motionScore: 0,
    });
    s.sendQuality({ tMicros: 2, faceWidthRatio: 0.3, meanBrightness: 0.5, motionScore: 0 });
    expect(await s.ping()).toBeGreaterThanOrEqual(0);
    const final = await s.stop();
    await collecting;
    expect(final).toMatchObject({ t: 'final', via: 'stream', measurementId: 'meas_000000000000000000000001' });
    expect(final.measurement.attested).toBe(true);
    expect(hrs).toEqual([61]);
    expect(iterated.map((e) => e.t)).toEqual(['ready', 'hr', 'pong', 'final']);
    const r = fake.received;
    expect(JSON.parse(r[0] as string)).toEqual({ t: 'hello', protocol: 1, token: 'tok_1' });
    expect(r.slice(1, 8)).toEqual([3900, 3900, 3900, 3900, 3900, 62, 18]);
    expect(r).toContain('{"t":"stop"}');
    expect(s.state).toBe('done');
  });

  it('a fatal error before ready rejects start() with its code', async () => {
    fake = await startFakeStreamServer({ helloError: 'token_expired' });
    const s = session(fake, 'stream');
    const err = await s.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamError);
    expect((err as StreamError).code).toBe('token_expired');
  });

  it('a dropped socket loses the measurement in stream mode', async () => {
    fake = await startFakeStreamServer({ dropAfterPackets: 2 });
    const s = session(fake, 'stream');
    await s.start();
    for (let i = 0; i < 4; i++) s.sendFrame({ pixels: px(), tMicros: i * 33_333 });
    await new Promise((r) => setTimeout(r, 50));
    await expect(s.stop()).rejects.toMatchObject({ code: 'disconnected' });
    expect(fake.uploads).toHaveLength(0);
  });

  it('a fatal server error mid-stream rejects stop() with the server code', async () => {
    fake = await startFakeStreamServer({ fatalAfterPackets: 2 });
    const s = session(fake, 'stream');
    const errors: string[] = [];
    s.on('error', (e) => errors.push(e.code));
    await s.start();
    for (let i = 0; i < 3; i++) s.sendFrame({ pixels: px(), tMicros: i * 33_333 });
    await new Promise((r) => setTimeout(r, 50));
    await expect(s.stop()).rejects.toMatchObject({ code: 'frame_rate_exceeded' });
    expect(errors).toEqual(['frame_rate_exceeded']);
  });

  it('abort sends abort and ends without final', async () => {
    fake = await startFakeStreamServer();
    const s = session(fake, 'stream');
    await s.start();
    s.sendFrame({ pixels: px(), tMicros: 0 });
    s.abort('user cancelled');
    await new Promise((r) => setTimeout(r, 50));
    expect(fake.received).toContain('{"t":"abort","reason":"user cancelled"}');
    expect(s.state).toBe('aborted');
    await expect(s.stop()).rejects.toMatchObject({ code: 'aborted' });
  });
});

describe('batch', () => {
  it('opens no socket; stop() uploads the frames file with the session token and waits for the job', async () => {
    fake = await startFakeStreamServer({ pendingPolls: 2 });
    const s = session(fake, 'batch');
    expect(await s.start()).toBeUndefined();
    for (let i = 0; i < 10; i++) s.sendFrame({ pixels: px(), tMicros: i * 33_333 });
    const final = await s.stop();
    expect(fake.connections).toBe(0);
    expect(fake.uploads).toEqual([
      { auth: 'Bearer tok_1', contentType: 'application/octet-stream', packets: 10, ok: true },
    ]);
    expect(fake.resultPolls).toBe(3);
    expect(final).toMatchObject({
      via: 'batch',
      measurementId: 'meas_000000000000000000000001',
      job: { jobId: 'cj_2', status: 'completed' },
    });
  });
});

describe('auto', () => {
  it('streams while buffering; when the socket dies the buffer goes through the fallback and stop() returns its result', async () => {
    fake = await startFakeStreamServer({ dropAfterPackets: 3 });
    const s = session(fake, 'auto');
    const fallbacks: string[] = [];
    s.on('fallback', (e) => fallbacks.push(e.reason));
    await s.start();
    for (let i = 0; i < 3; i++) s.sendFrame({ pixels: px(), tMicros: i * 33_333 });
    await new Promise((r) => setTimeout(r, 50));
    // the capture goes on after the drop: these frames only reach the buffer
    for (let i = 3; i < 8; i++) s.sendFrame({ pixels: px(), tMicros: i * 33_333 });
    const final = await s.stop();
    expect(fallbacks).toHaveLength(1);
    expect(final.via).toBe('batch');
    expect(fake.uploads[0].packets).toBe(8);
  });

  it('falls back when the socket never opens', async () => {
    fake = await startFakeStreamServer();
    const s = session(fake, 'auto', {
      session: { sessionToken: 'tok_1', sessionId: 'cj_1', wsUrl: 'ws://127.0.0.1:1/sdk/v1/cloud/stream' },
      baseUrl: fake.baseUrl,
    });
    expect(await s.start()).toBeUndefined();
    expect(s.fallbackActive).toMatch(/did not open/);
    for (let i = 0; i < 4; i++) s.sendFrame({ pixels: px(), tMicros: i * 33_333 });
    const final = await s.stop();
    expect(final.via).toBe('batch');
    expect(fake.uploads[0].packets).toBe(4);
  });

  it('when the stream finishes normally nothing is uploaded', async () => {
    fake = await startFakeStreamServer();
    const s = session(fake, 'auto');
    await s.start();
    for (let i = 0; i < 3; i++) s.sendFrame({ pixels: px(), tMicros: i * 33_333 });
    const final = await s.stop();
    expect(final.via).toBe('stream');
    expect(fake.uploads).toHaveLength(0);
  });
});

describe('duration', () => {
  it('maxDurationSec comes from the session, else the token dur claim, else 60; frames past it are refused', async () => {
    fake = await startFakeStreamServer();
    const payload = Buffer.from(JSON.stringify({ sid: 'cj_9', dur: 25 })).toString('base64url');
    const fromToken = new StreamSession({
      session: { sessionToken: `v1.${payload}.sig`, wsUrl: fake.wsUrl },
      delivery: 'batch',
    });
    expect(fromToken.sessionId).toBe('cj_9');
    expect(fromToken.maxDurationSec).toBe(25);
    const dflt = new StreamSession({
      session: { sessionToken: 'opaque', sessionId: 'cj_1', wsUrl: fake.wsUrl },
      delivery: 'batch',
    });
    expect(dflt.maxDurationSec).toBe(60);
    await dflt.start();
    expect(dflt.sendFrame({ pixels: px(), tMicros: 60_000_000 })).toBe(true);
    expect(dflt.sendFrame({ pixels: px(), tMicros: 60_000_001 })).toBe(false);
  });
});
