import { describe, expect, it } from 'vitest';
import { applySection } from './bench/index.js';
import { accuracyPage } from './eval/index.js';
import { HEADLINE_HEADING, upsertHeadline, type HeadlineRow } from './headline.js';

const row = (area: string, figure: string, met: boolean | null = true): HeadlineRow => ({
  area,
  figure,
  value: '1 µs',
  target: '< 2 µs',
  met,
  reference: '1.0× x',
  command: '`npm run bench`',
});

const DOC = '# Benchmarks\n\nIntro.\n\n## Engine\n\nold engine\n\n## API\n\nold api\n';

describe('headline table', () => {
  it('is created after the title when missing, before the first section', () => {
    const out = upsertHeadline(DOC, 'Intro of the table.', 'Engine', [row('Engine', 'push')], ['Engine']);
    const lines = out.split('\n');
    expect(lines.indexOf(HEADLINE_HEADING)).toBeGreaterThan(lines.indexOf('Intro.'));
    expect(lines.indexOf(HEADLINE_HEADING)).toBeLessThan(lines.indexOf('## Engine'));
    expect(out).toContain('| Engine | push | 1 µs | < 2 µs | met | 1.0× x | `npm run bench` |');
    expect(out).toContain('old engine');
  });

  it("replaces only the rerun area's rows, keeps the others (hand-written ones too) in the given order", () => {
    const order = ['Engine', 'API', 'Tests'];
    let doc = upsertHeadline(DOC, 'i', 'API', [row('API', 'ratio', false)], order);
    doc = doc.replace('| API | ratio', '| Tests | npm test wall time | 1 s | – | – | – | `npm test` |\n| API | ratio');
    doc = upsertHeadline(doc, 'i', 'Engine', [row('Engine', 'push'), row('Engine', 'offline', null)], order);
    doc = upsertHeadline(doc, 'i', 'Engine', [row('Engine', 'push v2')], order);
    const table = doc
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| area') && !l.startsWith('| ---'));
    expect(table.map((l) => l.split(' | ')[1])).toEqual(['push v2', 'ratio', 'npm test wall time']);
    expect(doc).toContain('| API | ratio | 1 µs | < 2 µs | **not met** |');
    expect(doc.match(new RegExp(HEADLINE_HEADING, 'g'))).toHaveLength(1);
  });

  it('npm run bench writes the section and its rows; a plain-markdown section leaves the table alone', () => {
    const doc = applySection(DOC, { markdown: '## Engine\n\nnew engine', headline: [row('Engine', 'push')] });
    expect(doc).toContain('new engine');
    expect(doc).not.toContain('old engine');
    expect(doc).toContain('| Engine | push |');
    const again = applySection(doc, '## API\n\nnew api');
    expect(again).toContain('new api');
    expect(again).toContain('| Engine | push |');
  });

  it('npm run eval opens the page with the table, then the method and the sections', () => {
    const page = accuracyPage([row('ubfc2', 'MAE', false)], ['## Phantom\n\np']);
    const order = ['# Engine accuracy', HEADLINE_HEADING, '## Method', '## Phantom'].map((h) => page.indexOf(h));
    expect(order.every((x, i) => x >= 0 && (i === 0 || x > order[i - 1]))).toBe(true);
    expect(page).toContain('| ubfc2 | MAE | 1 µs | < 2 µs | **not met** |');
  });
});
