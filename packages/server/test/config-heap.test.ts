/** VITALS_HEAP_GROWING_PERCENT (docs/operating.md; src/heap-tuning.ts). */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { startServer } from '../src/cli/serve.js';
import { ConfigError, DEFAULT_HEAP_GROWING_PERCENT, loadConfig } from '../src/config.js';
import { appliedHeapGrowingPercent, tuneHeap } from '../src/heap-tuning.js';

describe('heap growing percent', () => {
  test('defaults to 200; 0 leaves V8 its own choice; any whole number up to 1000', () => {
    expect(DEFAULT_HEAP_GROWING_PERCENT).toBe(200);
    expect(loadConfig({}).heapGrowingPercent).toBe(200);
    expect(loadConfig({ VITALS_HEAP_GROWING_PERCENT: '' }).heapGrowingPercent).toBe(200);
    expect(loadConfig({ VITALS_HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(loadConfig({ VITALS_HEAP_GROWING_PERCENT: '1000' }).heapGrowingPercent).toBe(1000);
  });

  test.each(['-1', '1001', '2.5', 'auto'])(
    'VITALS_HEAP_GROWING_PERCENT=%s is refused, naming the variable',
    (value) => {
      expect(() => loadConfig({ VITALS_HEAP_GROWING_PERCENT: value })).toThrow(ConfigError);
      expect(() => loadConfig({ VITALS_HEAP_GROWING_PERCENT: value })).toThrow('VITALS_HEAP_GROWING_PERCENT');
    },
  );
});

describe('a server process applies it', () => {
  test('startServer (serve and each cluster process) sets the configured factor before it listens', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vitals-heap-'));
    try {
      const config = loadConfig({ VITALS_DATA_DIR: dir, VITALS_HEAP_GROWING_PERCENT: '150' }, { port: 0 });
      const server = await startServer(config);
      try {
        expect(appliedHeapGrowingPercent()).toBe(150);
        expect((await fetch(`http://127.0.0.1:${server.port}/health`)).status).toBe(200);
      } finally {
        await server.stop();
      }
    } finally {
      tuneHeap(0); // this test process goes back to V8's own factor
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
