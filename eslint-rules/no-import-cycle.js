// ESLint rule `local/no-import-cycle`: no module may reach itself through its relative imports
// (issue 14). `import-x/no-cycle` skips `import type`, so a cycle could hide behind a type import;
// this rule counts every edge TypeScript sees: value, type, re-export and dynamic `import()`.
// A cycle means two modules share one owner: break it by moving the shared thing, not the keyword.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** file -> { mtimeMs, imports: [{ spec, target }] }, shared by every file of one lint run. */
const parsed = new Map();

function importsOf(file) {
  let mtimeMs;
  try {
    mtimeMs = fs.statSync(file).mtimeMs;
  } catch {
    return [];
  }
  const hit = parsed.get(file);
  if (hit && hit.mtimeMs === mtimeMs) return hit.imports;
  const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  const imports = [];
  for (const { fileName: spec } of info.importedFiles) {
    const target = resolveRelative(file, spec);
    if (target) imports.push({ spec, target });
  }
  parsed.set(file, { mtimeMs, imports });
  return imports;
}

/** Relative specifiers only: packages import each other through project references, which tsc keeps acyclic. */
function resolveRelative(from, spec) {
  if (!spec.startsWith('./') && !spec.startsWith('../')) return undefined;
  const base = path.resolve(path.dirname(from), spec);
  const stem = base.replace(/\.(js|mjs|cjs|ts|mts|cts)$/, '');
  const candidates = [`${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, base, path.join(base, 'index.ts')];
  return candidates.find((c) => fs.existsSync(c) && fs.statSync(c).isFile());
}

/** The shortest import path from `start` back to `start`, or undefined (breadth-first). */
function shortestCycle(start) {
  const previous = new Map();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const { target } of importsOf(file)) {
      if (target === start) {
        const chain = [file];
        while (chain[0] !== start) chain.unshift(previous.get(chain[0]));
        return chain;
      }
      if (!previous.has(target)) {
        previous.set(target, file);
        queue.push(target);
      }
    }
  }
  return undefined;
}

export const noImportCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid import cycles, type imports included' },
    schema: [],
    messages: { cycle: 'Import cycle: {{chain}}' },
  },
  create(context) {
    const file = context.physicalFilename;
    return {
      Program(program) {
        if (!path.isAbsolute(file)) return;
        const chain = shortestCycle(file);
        if (!chain) return;
        const next = chain[1] ?? file;
        const edge = importsOf(file).find((i) => i.target === next);
        const node =
          program.body.find((n) => n.source && typeof n.source.value === 'string' && n.source.value === edge?.spec) ??
          program;
        const cwd = context.cwd ?? process.cwd();
        const names = [...chain, file].map((f) => path.relative(cwd, f));
        context.report({ node, messageId: 'cycle', data: { chain: names.join(' -> ') } });
      },
    };
  },
};

export const localPlugin = { rules: { 'no-import-cycle': noImportCycle } };
