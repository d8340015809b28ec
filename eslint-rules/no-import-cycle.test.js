// The cycle rule on real files: a type-only cycle fails lint (import-x/no-cycle would let it
// pass), a re-export cycle too, and an acyclic chain does not.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { afterAll, expect, test } from 'vitest';
import { localPlugin } from './no-import-cycle.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-cycle-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function lint(files) {
  const root = fs.mkdtempSync(path.join(dir, 'case-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
  const eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { local: localPlugin },
        rules: { 'local/no-import-cycle': 'error' },
      },
    ],
  });
  const results = await eslint.lintFiles(['**/*.ts']);
  return Object.fromEntries(
    results.map((r) => [path.relative(root, r.filePath), r.messages.map((m) => `${m.line}: ${m.message}`)]),
  );
}

test.each([
  [
    'type-only',
    "import type { B } from './b.js';\nexport type A = B;\n",
    "import type { A } from './a.js';\nexport type B = { a?: A };\n",
  ],
  [
    'value',
    "import { b } from './b.js';\nexport const a = () => b;\n",
    "import { a } from './a.js';\nexport const b = () => a;\n",
  ],
  ['re-export', "export * from './b.js';\nexport const a = 1;\n", "import { a } from './a.js';\nexport const b = a;\n"],
])('a %s cycle is an error in both files, with its path', async (_, a, b) => {
  const out = await lint({ 'a.ts': a, 'b.ts': b });
  expect(out['a.ts']).toEqual(['1: Import cycle: a.ts -> b.ts -> a.ts']);
  expect(out['b.ts']).toEqual(['1: Import cycle: b.ts -> a.ts -> b.ts']);
});

test('a longer cycle through a folder index is found; an acyclic chain is clean', async () => {
  const out = await lint({
    'a.ts': "import { c } from './lib/index.js';\nexport const a = c;\n",
    'lib/index.ts': "export { c } from './c.js';\n",
    'lib/c.ts': "import type { A } from '../d.js';\nexport const c = 1;\nexport type C = A;\n",
    'd.ts': "import { a } from './a.js';\nexport type A = typeof a;\n",
    'clean/x.ts': "import { y } from './y.js';\nexport const x = y;\n",
    'clean/y.ts': 'export const y = 1;\n',
  });
  expect(out['a.ts']).toEqual(['1: Import cycle: a.ts -> lib/index.ts -> lib/c.ts -> d.ts -> a.ts']);
  expect(out['clean/x.ts']).toEqual([]);
  expect(out['clean/y.ts']).toEqual([]);
});
