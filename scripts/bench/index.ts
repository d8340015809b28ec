// `npm run bench [-- name ...] [--quick]`: runs every section file of scripts/bench (or the named
// ones) and rewrites each one's `## <Name>` section of docs/benchmarks.md, leaving the others as
// they are. A section file exports `async function run(): Promise<SectionOutput>` returning markdown that
// starts with its own `## <Name>` heading, or `{ markdown, headline }` whose headline rows replace
// that section's rows in the "At a glance" table that opens the document (scripts/headline.ts).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { splitSection, upsertHeadline, type SectionOutput } from '../headline.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DOC = path.resolve(HERE, '../../docs/benchmarks.md');
const HEADER =
  '# Benchmarks\n\nEach section is written by `npm run bench -- <name>` (files in `scripts/bench/`); `npm run bench` runs them all. Figures are from the machine named in each section.\n';

const HEADLINE_INTRO =
  'Each figure of the sections below with its target and the reference it is a ratio to; the sections give the method, the machine and the spread between runs. The machine is a shared 2-core one: compare ratios, not absolute times.';
const HEADLINE_ORDER = ['Engine', 'Streaming', 'Batch', 'Media', 'Video jobs', 'API', 'Tests'];

/** Writes a section's markdown and its headline rows into the document. */
export function applySection(doc: string, out: SectionOutput): string {
  const { markdown, headline } = splitSection(out);
  const next = replaceSection(doc, markdown);
  if (!headline.length) return next;
  const area = markdown
    .split('\n', 1)[0]
    .replace(/^##\s*/, '')
    .trim();
  return upsertHeadline(next, HEADLINE_INTRO, area, headline, HEADLINE_ORDER);
}

export function replaceSection(doc: string, section: string): string {
  const heading = section.split('\n', 1)[0].trim();
  if (!/^## \S/.test(heading)) throw new Error(`a section must start with "## <Name>", got "${heading}"`);
  const lines = doc.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  const body = section.trimEnd().split('\n');
  if (start === -1) return `${doc.trimEnd()}\n\n${body.join('\n')}\n`;
  let end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  if (end === -1) end = lines.length;
  const after = lines.slice(end);
  return [...lines.slice(0, start), ...body, ...(after.length ? ['', ...after] : [''])].join('\n');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const names = args.filter((a) => !a.startsWith('--'));
  const available = fs
    .readdirSync(HERE)
    .filter((f) => f.endsWith('.ts') && f !== 'index.ts')
    .map((f) => f.slice(0, -3))
    .sort();
  const unknown = names.filter((n) => !available.includes(n));
  if (unknown.length) {
    console.error(`unknown bench section(s): ${unknown.join(', ')}; available: ${available.join(', ')}`);
    process.exitCode = 2;
    return;
  }
  for (const name of names.length ? names : available) {
    console.error(`bench: ${name} ...`);
    const mod = (await import(pathToFileURL(path.join(HERE, `${name}.ts`)).href)) as {
      run?: () => Promise<SectionOutput>;
    };
    if (typeof mod.run !== 'function') {
      console.error(`bench: ${name}.ts exports no run(); skipped`);
      continue;
    }
    const out = await mod.run();
    console.log(`${splitSection(out).markdown}\n`);
    const doc = fs.existsSync(DOC) ? fs.readFileSync(DOC, 'utf8') : HEADER;
    fs.writeFileSync(DOC, applySection(doc, out));
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
