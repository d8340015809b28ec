// The headline table that opens docs/benchmarks.md and docs/accuracy.md: each figure with its
// target and whether it is met, so a reader finds the answer in seconds and the narrative can sit
// below it. The generators (`npm run bench`, `npm run eval`) produce it from the figures they
// compute, so a regeneration keeps it (issue 14, item 7).

/** One headline figure. `area` groups rows (a bench section's name, an eval data set). */
export interface HeadlineRow {
  area: string;
  figure: string;
  value: string;
  /** The target as written in the section (`< 20 µs`), or `–` when the figure has none. */
  target: string;
  /** true met, false not met, null no target to meet. */
  met: boolean | null;
  /** What the figure is a ratio to or compared with (`3.0× a plain 3-channel mean`). */
  reference: string;
  /** How to reproduce it. */
  command: string;
}

/** What a bench or eval section returns: its markdown, and optionally its headline rows. */
export type SectionOutput = string | { markdown: string; headline: HeadlineRow[] };

export function splitSection(out: SectionOutput): { markdown: string; headline: HeadlineRow[] } {
  return typeof out === 'string' ? { markdown: out, headline: [] } : out;
}

export const HEADLINE_HEADING = '## At a glance';
const COLUMNS = ['area', 'figure', 'value', 'target', 'met', 'reference (ratio to)', 'command'];

export function metCell(met: boolean | null): string {
  return met === null ? '–' : met ? 'met' : '**not met**';
}

/** A table cell: pipes escaped, line breaks flattened, empty shown as `–`. */
function cell(s: string): string {
  const t = s
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\|/g, '\\|')
    .trim();
  return t === '' ? '–' : t;
}

export function rowLine(r: HeadlineRow): string {
  const cells = [r.area, r.figure, r.value, r.target, metCell(r.met), r.reference, r.command].map(cell);
  return `| ${cells.join(' | ')} |`;
}

export function renderHeadline(intro: string, rows: readonly HeadlineRow[]): string {
  return [
    HEADLINE_HEADING,
    '',
    intro,
    '',
    `| ${COLUMNS.join(' | ')} |`,
    `| ${COLUMNS.map(() => '---').join(' | ')} |`,
    ...rows.map(rowLine),
  ].join('\n');
}

/** The area (first cell) of a table row line, or null for a line that is not a data row. */
function areaOf(line: string): string | null {
  const m = /^\|\s*([^|]*?)\s*\|/.exec(line);
  if (!m || /^-+$/.test(m[1]) || m[1] === COLUMNS[0]) return null;
  return m[1];
}

/**
 * Replaces the rows of `area` in the headline table of `doc` by `rows` and keeps every other row
 * (another section's, or one written by hand such as the test suite's time), ordered by `order`
 * and then as found. Creates the headline section right after the title and its opening paragraph
 * when the document has none.
 */
export function upsertHeadline(
  doc: string,
  intro: string,
  area: string,
  rows: readonly HeadlineRow[],
  order: readonly string[],
): string {
  const lines = doc.split('\n');
  const start = lines.findIndex((l) => l.trim() === HEADLINE_HEADING);
  let kept: string[] = [];
  let before: string[];
  let after: string[];
  if (start === -1) {
    const firstSection = lines.findIndex((l) => l.startsWith('## '));
    const at = firstSection === -1 ? lines.length : firstSection;
    before = lines.slice(0, at);
    after = lines.slice(at);
  } else {
    let end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
    if (end === -1) end = lines.length;
    kept = lines.slice(start, end).filter((l) => {
      const a = areaOf(l);
      return a !== null && a !== area;
    });
    before = lines.slice(0, start);
    after = lines.slice(end);
  }
  const all = [
    ...kept.map((l) => ({ area: areaOf(l) as string, line: l })),
    ...rows.map((r) => ({ area: r.area, line: rowLine(r) })),
  ];
  const rank = (a: string): number => (order.includes(a) ? order.indexOf(a) : order.length);
  const sorted = all.map((x, i) => ({ ...x, i })).sort((x, y) => rank(x.area) - rank(y.area) || x.i - y.i);
  const table = renderHeadline(intro, []).split('\n');
  const section = [...table, ...sorted.map((x) => x.line)];
  while (before.length && before[before.length - 1].trim() === '') before.pop();
  return [...before, '', ...section, '', ...after].join('\n').replace(/\n*$/, '\n');
}
