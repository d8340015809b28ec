/**
 * The operator command resolves after one install (issue 14, item 1; CONTRACT.md: `npx --no
 * vitals-server ...` must resolve locally, never from a registry). npm links a workspace's bins
 * before the root `prepare` builds dist/ and skips a bin whose target is missing, so every bin
 * must point at a committed file. CI runs this suite right after `npm ci` on a fresh clone, so
 * running the linked `node_modules/.bin/vitals-server` here is the fresh-clone proof.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const run = promisify(execFile);

const workspaces = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] })
  .workspaces;
const bins = workspaces.flatMap((ws) => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, ws, 'package.json'), 'utf8')) as {
    bin?: Record<string, string>;
  };
  return Object.entries(pkg.bin ?? {}).map(([name, target]) => ({ ws, name, target }));
});

let dataDir: string;
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-bin-'));
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe('workspace bins', () => {
  test('vitals and vitals-server are declared', () => {
    expect(bins.map((b) => b.name).sort()).toEqual(['vitals', 'vitals-server']);
  });

  test.for(bins)('$name points at a committed executable outside dist/ and is linked to it', ({ ws, name, target }) => {
    expect(target.split('/')[0]).not.toBe('dist');
    const file = path.join(ROOT, ws, target);
    expect(fs.statSync(file).mode & 0o111).not.toBe(0);
    expect(fs.realpathSync(path.join(ROOT, 'node_modules/.bin', name))).toBe(fs.realpathSync(file));
  });
});

describe('node_modules/.bin/vitals-server', { timeout: 60_000 }, () => {
  test('orgs create --name demo --json prints an organization id', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, VITALS_DATA_DIR: dataDir };
    delete env.VITALS_DATABASE_URL;
    const { stdout } = await run(
      path.join(ROOT, 'node_modules/.bin/vitals-server'),
      ['orgs', 'create', '--name', 'demo', '--json'],
      { cwd: ROOT, env, timeout: 30_000 },
    );
    expect(JSON.parse(stdout)).toEqual({ orgId: expect.stringMatching(/^org_[0-9a-f]{24}$/) });
  });
});
