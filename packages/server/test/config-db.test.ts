/** The store's PostgreSQL limits from the environment (config.ts; docs/operating.md). */
import { describe, expect, test } from 'vitest';
import { ConfigError, DB_LIMIT_DEFAULTS, loadConfig } from '../src/config.js';
import { storeLimits } from '../src/deps.js';

describe('VITALS_DB_* limits', () => {
  test('defaults: 5 s to get a connection, 30 s per statement, 4096 queued writes', () => {
    const c = loadConfig({});
    expect([c.dbConnectTimeoutMs, c.dbStatementTimeoutMs, c.dbMaxQueuedWrites]).toEqual([5000, 30_000, 4096]);
    expect(DB_LIMIT_DEFAULTS).toEqual({ connectTimeoutMs: 5000, statementTimeoutMs: 30_000, maxQueuedWrites: 4096 });
  });

  test('read from the environment and handed to the store', () => {
    const c = loadConfig({
      VITALS_DB_CONNECT_TIMEOUT_MS: '1500',
      VITALS_DB_STATEMENT_TIMEOUT_MS: '10000',
      VITALS_DB_MAX_QUEUED_WRITES: '256',
    });
    expect(storeLimits(c)).toEqual({ connectTimeoutMs: 1500, statementTimeoutMs: 10_000, maxQueuedWrites: 256 });
  });

  test.for([
    ['VITALS_DB_CONNECT_TIMEOUT_MS', '0'],
    ['VITALS_DB_CONNECT_TIMEOUT_MS', '-1'],
    ['VITALS_DB_CONNECT_TIMEOUT_MS', '2.5'],
    ['VITALS_DB_CONNECT_TIMEOUT_MS', '5s'],
    ['VITALS_DB_CONNECT_TIMEOUT_MS', '2147483648'],
    ['VITALS_DB_STATEMENT_TIMEOUT_MS', '0'],
    ['VITALS_DB_STATEMENT_TIMEOUT_MS', '2147483000'],
    ['VITALS_DB_MAX_QUEUED_WRITES', '0'],
    ['VITALS_DB_MAX_QUEUED_WRITES', '1000001'],
  ])('%s=%s stops the start, naming the variable', ([name, value]) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});
