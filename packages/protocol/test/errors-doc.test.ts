/**
 * docs/errors.md is kept in step with the error tables (STYLE habit 1; fastify's
 * test/internals/errors.test.js): every code with its HTTP status, every usage-log code, streaming
 * code, video rejection and CLI exit code. Adding a code without documenting it fails here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import {
  ERROR_STATUS,
  EXIT_CODES,
  STREAM_ERROR_CODES,
  USAGE_ERROR_CODES,
  VIDEO_REJECTION_CODES,
} from '../src/errors.js';

const DOC = fs.readFileSync(
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../docs/errors.md'),
  'utf8',
);

/** The rows of the table under a `## heading`, as arrays of cell text (backticks removed). */
function table(heading: string): string[][] {
  const start = DOC.indexOf(`\n## ${heading}`);
  expect(start, `section "${heading}"`).toBeGreaterThan(-1);
  const end = DOC.indexOf('\n## ', start + 1);
  const section = DOC.slice(start, end === -1 ? undefined : end);
  return section
    .split('\n')
    .filter((l) => l.startsWith('|') && !/^\|[-| ]+\|$/.test(l))
    .slice(1)
    .map((l) =>
      l
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim().replace(/`/g, '')),
    );
}

describe('docs/errors.md', () => {
  test('every ERROR_STATUS code, with its status, and nothing else', () => {
    const rows = table('HTTP error codes');
    const documented = Object.fromEntries(rows.map(([status, code]) => [code, Number(status)]));
    expect(documented).toEqual({ ...ERROR_STATUS });
  });

  test('the ten usage-log codes', () => {
    const codes = table('Usage-log').map((r) => r[0]);
    expect(codes.sort()).toEqual([...USAGE_ERROR_CODES].sort());
    const status = Object.fromEntries(table('Usage-log').map((r) => [r[0], Number(r[1])]));
    for (const c of USAGE_ERROR_CODES) {
      const expected =
        c === 'key_disabled'
          ? ERROR_STATUS.key_disabled
          : c === 'rate_limited'
            ? ERROR_STATUS.rate_limited
            : ERROR_STATUS.unauthorized;
      expect(status[c], c).toBe(expected);
    }
  });

  test('the streaming codes', () => {
    expect(
      table('Streaming error codes')
        .map((r) => r[0])
        .sort(),
    ).toEqual([...STREAM_ERROR_CODES].sort());
  });

  test('the video rejections, in the order they are checked', () => {
    expect(table('Video rejections').map((r) => r[0])).toEqual([...VIDEO_REJECTION_CODES]);
  });

  test('the CLI exit codes', () => {
    const rows = table('Command-line exit codes');
    expect(Object.fromEntries(rows.map(([exit, name]) => [name, Number(exit)]))).toEqual({ ...EXIT_CODES });
  });
});
