/**
 * The newcomer's path: README.md is short, every link in it, CONTRIBUTING.md and docs/ resolves
 * (files and #anchors), and the examples a reader runs first (README's quick example, the opening
 * example of the docs pages that need no model or server) run as written, with 'agent-machine'
 * read from this checkout's sources.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, '../..');
const pages = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(repo, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const read = (page: string) => readFileSync(join(repo, page), 'utf8');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(page: string): Set<string> {
  const text = read(page).replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1] as string)));
}

/** The first ```ts block of a page, or of the part of it after `after`. */
function firstExample(page: string, after = ''): string {
  const text = read(page);
  const from = after ? text.indexOf(after) : 0;
  const block = /```ts\n([\s\S]*?)```/.exec(text.slice(from));
  if (from < 0 || !block) throw new Error(`${page} has no \`\`\`ts example${after ? ` after ${after}` : ''}`);
  return block[1] as string;
}

describe('README.md and docs/', () => {
  it('README.md is at most 350 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(350);
  });

  it.each(pages)('every relative link of %s resolves', (page) => {
    const broken: string[] = [];
    const text = read(page).replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (!target || /^[a-z]+:/i.test(target)) continue;
      const [path, hash] = target.split('#') as [string, string | undefined];
      const file = path ? join(dirname(page), path) : page;
      if (!existsSync(join(repo, file))) broken.push(`${target} (no file ${file})`);
      else if (hash && file.endsWith('.md') && !anchorsOf(file).has(hash))
        broken.push(`${target} (no heading)`);
    }
    expect(broken).toEqual([]);
  });

  it('every docs page opens with an example', () => {
    const without = pages
      .filter((page) => page.startsWith('docs/') && page !== 'docs/known-limits.md')
      .filter((page) => {
        // the title, at most one paragraph, then a code block
        const [, ...rest] = read(page).split('\n');
        const body = rest.join('\n').trimStart();
        const paragraphs = body.split(/\n\s*\n/);
        return !(paragraphs[0]?.startsWith('```') || paragraphs[1]?.startsWith('```'));
      });
    expect(without).toEqual([]);
  });
});

describe('the examples a reader runs first', () => {
  const work = join(repo, '.tmp/docs-examples');
  mkdirSync(work, { recursive: true });
  const cases = [
    { page: 'README.md', after: '## Quick example', prints: 'completed 5 2' },
    { page: 'docs/machine.md', after: '', prints: 'completed completed' },
    { page: 'docs/budgets-and-errors.md', after: '', prints: 'stopped steps_limit_reached 3' },
    { page: 'docs/tools-and-drivers.md', after: '', prints: "{ city: 'Lisbon', celsius: 21 } It is 21 °C." },
    { page: 'docs/integrations.md', after: '', prints: 'invoke_agent' },
  ];

  it.each(cases)(
    '$page runs as written',
    async ({ page, after, prints }) => {
      const source = firstExample(page, after).replaceAll(
        "from 'agent-machine'",
        `from ${JSON.stringify(join(repo, 'src/index.ts'))}`,
      );
      const file = join(work, `${page.replace(/\W/g, '-')}.mts`);
      writeFileSync(file, source);
      const { stdout } = await run(process.execPath, ['--import', 'tsx', file], {
        cwd: repo,
        timeout: 60_000,
      });
      expect(stdout).toContain(prints);
    },
    90_000,
  );
});
