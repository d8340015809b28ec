/** VITALS_HEAP_GROWING_PERCENT (docs/operating.md; src/heap-tuning.ts). */
import { describe, expect, test } from 'vitest';
import { ConfigError, DEFAULT_HEAP_GROWING_PERCENT, loadConfig } from '../src/config.js';

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
