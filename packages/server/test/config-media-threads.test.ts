/** VITALS_MEDIA_THREADS / VITALS_MEDIA_NICE (docs/operating.md; docs/media.md, "Worker threads"). */
import os from 'node:os';
import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('media threads', () => {
  test('defaults: one thread per core at niceness 10; 0 threads keeps video jobs on the main thread', () => {
    expect(loadConfig({}).mediaThreads).toBe(os.availableParallelism());
    expect(loadConfig({}).mediaNice).toBe(10);
    expect(loadConfig({ VITALS_MEDIA_THREADS: '0' }).mediaThreads).toBe(0);
    expect(loadConfig({ VITALS_MEDIA_THREADS: '3', VITALS_MEDIA_NICE: '0' })).toMatchObject({
      mediaThreads: 3,
      mediaNice: 0,
    });
  });

  test.each([
    ['VITALS_MEDIA_THREADS', '-1'],
    ['VITALS_MEDIA_THREADS', '2.5'],
    ['VITALS_MEDIA_THREADS', '257'],
    ['VITALS_MEDIA_THREADS', 'all'],
    ['VITALS_MEDIA_NICE', '-1'],
    ['VITALS_MEDIA_NICE', '20'],
    ['VITALS_MEDIA_NICE', 'low'],
  ])('%s=%s is refused, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});
