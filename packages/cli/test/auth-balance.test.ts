/**
 * `vitals auth test` shows whether the key's organization is metered (CLARIFICATIONS 28): an
 * organization whose balance was never set reads "unmetered", one with a balance shows it. Runs the
 * CLI in-process (runCli) against a real listening server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '@vitals/server/testing';
import { runCli } from '@vitals/cli';

type Server = Awaited<ReturnType<typeof startTestServer>>;
let server: Server;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

async function authTest(key: { keyId: string; secret: string }, ...args: string[]): Promise<string> {
  let out = '';
  let err = '';
  const code = await runCli(['auth', 'test', ...args], {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: { VITALS_KEY_ID: key.keyId, VITALS_KEY_SECRET: key.secret, VITALS_BASE_URL: server.baseUrl },
  });
  expect(code, err).toBe(0);
  return out;
}

describe('vitals auth test: token balance', () => {
  it.for([
    ['unmetered (never set)', null, /Token balance\s+unmetered/, { metering: 'unmetered', tokenBalanceUsd: null }],
    ['metered at $25', 25, /Token balance\s+\$25\.00/, { metering: 'metered', tokenBalanceUsd: 25 }],
    ['metered at $0', 0, /Token balance\s+\$0\.00/, { metering: 'metered', tokenBalanceUsd: 0 }],
  ] as const)('%s', async ([, balance, line, facts]) => {
    const key = await server.createKey({ tokenBalanceUsd: balance });
    expect(await authTest(key)).toMatch(line);
    expect(JSON.parse(await authTest(key, '--json'))).toMatchObject(facts);
  });
});
