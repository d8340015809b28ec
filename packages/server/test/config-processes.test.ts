/** `--processes` / VITALS_PROCESSES (docs/operating.md, "Several processes on one machine"). */
import os from 'node:os';
import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig, MAX_PROCESSES } from '../src/config.js';
import { runServerCli } from '../src/cli/main.js';

describe('server processes', () => {
  test('default 1; a count; auto is one per core; the flag overrides the variable', () => {
    expect(loadConfig({}).processes).toBe(1);
    expect(loadConfig({ VITALS_PROCESSES: '3' }).processes).toBe(3);
    expect(loadConfig({ VITALS_PROCESSES: 'auto' }).processes).toBe(Math.min(MAX_PROCESSES, os.availableParallelism()));
    expect(loadConfig({ VITALS_PROCESSES: '3' }, { processes: '2' }).processes).toBe(2);
  });

  test.each([
    ['VITALS_PROCESSES', '0'],
    ['VITALS_PROCESSES', '-1'],
    ['VITALS_PROCESSES', '1.5'],
    ['VITALS_PROCESSES', String(MAX_PROCESSES + 1)],
    ['VITALS_PROCESSES', 'many'],
  ])('%s=%s is refused, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  test('serve --processes 0 exits 2 naming the flag', async () => {
    let stderr = '';
    const code = await runServerCli(['serve', '--processes', '0', '--port', '0'], {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (stderr += s) },
      env: {},
      untilStopped: () => new Promise(() => undefined),
    });
    expect(code).toBe(2);
    expect(stderr).toContain('--processes');
  });
});
