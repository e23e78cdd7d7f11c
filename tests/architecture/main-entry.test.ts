/**
 * The main entry is what an app uses: at most 120 values of its own. The names it exported before
 * they moved to a subpath entry (src/deprecated/) stay, deprecated, for one release: each is the
 * value its new home (package.json "exports") exports, says where that is, and is in CHANGELOG.md.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as deprecated from '../../src/deprecated/index';
import * as main from '../../src/index';

const root = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const load = (path: string) =>
  import(pathToFileURL(join(root, path)).href) as Promise<Record<string, unknown>>;

/** The source file of each subpath entry, as package.json's "exports" names it (`stores` -> src/persistence/index.ts). */
const subpaths = new Map(
  Object.entries(
    JSON.parse(read('package.json')).exports as Record<string, { import?: { types: string } }>,
  ).flatMap(([key, target]) =>
    key.startsWith('./') && target.import
      ? [[key.slice(2), target.import.types.replace(/^\.\/dist\/types\//, '').replace(/\.d\.ts$/, '.ts')]]
      : [],
  ),
);

interface Alias {
  readonly file: string;
  readonly kind: 'const' | 'type';
  readonly name: string;
  /** Where its JSDoc says it moved (`stores` for `agent-machine/stores`). */
  readonly home: string;
  /** The source file of the namespace its value or type is read from. */
  readonly source: string;
  readonly member: string;
}

/** Every `export const|type` of src/deprecated/*.ts with its `@deprecated` line; the lines that are not are returned as `unmatched`. */
function aliases(): { found: Alias[]; unmatched: string[] } {
  const found: Alias[] = [];
  const unmatched: string[] = [];
  for (const name of readdirSync(join(root, 'src/deprecated'))) {
    if (name === 'index.ts') continue;
    const file = `src/deprecated/${name}`;
    const text = read(file);
    const namespaces = new Map(
      [...text.matchAll(/^import \* as (\w+) from '\.\.\/([^']+)';$/gm)].map((m) => [
        m[1] as string,
        `src/${m[2]}.ts`,
      ]),
    );
    const pattern =
      /\/\*\* @deprecated Import from `agent-machine\/(\w+)`\. \*\/\nexport (const|type) (\w+)(?:<[^>]*>)? = (\w+)\.(\w+)(?:<[^>]*>)?;/g;
    for (const m of text.matchAll(pattern)) {
      const [, home, kind, alias, namespace, member] = m as unknown as string[];
      found.push({
        file,
        kind: kind as Alias['kind'],
        name: alias as string,
        home: home as string,
        source: namespaces.get(namespace as string) ?? `no import of ${namespace}`,
        member: member as string,
      });
    }
    const matched = new Set(found.filter((a) => a.file === file).map((a) => `${a.kind} ${a.name}`));
    for (const m of text.matchAll(/^export (const|type) (\w+)/gm))
      if (!matched.has(`${m[1]} ${m[2]}`)) unmatched.push(`${file}: ${m[0]}`);
  }
  return { found, unmatched };
}

/** The names src/index.ts exports itself: its export lists and the modules it re-exports with `export *` (src/deprecated/ aside). */
async function ownNames(): Promise<Set<string>> {
  const text = read('src/index.ts').replace(/\/\*[\s\S]*?\*\//g, '');
  const names = new Set<string>();
  for (const m of text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'[^']+'/gm))
    for (const spec of (m[1] as string).split(',').map((s) => s.trim()))
      if (spec)
        names.add(
          spec
            .replace(/^type\s+/, '')
            .split(/\s+as\s+/)
            .pop() as string,
        );
  for (const m of text.matchAll(/^export\s+\*\s+from\s*'\.\/([^']+)'/gm)) {
    if (m[1] === 'deprecated/index') continue;
    const module = await load(`src/${m[1]}.ts`);
    for (const name of Object.keys(module)) names.add(name);
    for (const t of read(`src/${m[1]}.ts`).matchAll(/\btype\s+(\w+)/g)) names.add(t[1] as string);
  }
  return names;
}

const { found, unmatched } = aliases();
const deprecatedNames = new Set(found.map((a) => a.name));

describe('the main entry', () => {
  it('exports at most 120 values of its own (its deprecated aliases aside)', () => {
    const own = Object.keys(main).filter((name) => !(name in deprecated));
    expect(own.length).toBeGreaterThan(50);
    expect(own.length).toBeLessThanOrEqual(120);
    expect(own).toContain('createAgent');
    expect(own).not.toContain('executeTools');
  });

  it('exports as its own none of the names it keeps only as deprecated aliases, and nothing else', async () => {
    const own = await ownNames();
    expect([...own].filter((name) => deprecatedNames.has(name))).toEqual([]);
    expect(Object.keys(main).filter((name) => !own.has(name) && !deprecatedNames.has(name))).toEqual([]);
  });

  it('re-exports every deprecated alias', () => {
    const values = found.filter((a) => a.kind === 'const').map((a) => a.name);
    expect(values.length).toBeGreaterThan(100);
    expect(values.filter((name) => !(name in main) || !(name in deprecated))).toEqual([]);
    expect(Object.keys(deprecated).filter((name) => !values.includes(name))).toEqual([]);
  });
});

describe('the deprecated aliases (src/deprecated/)', () => {
  it('each export is one alias with its @deprecated line naming where it moved', () => {
    expect(unmatched).toEqual([]);
    expect(found.filter((a) => a.name !== a.member).map((a) => a.name)).toEqual([]);
  });

  it('each is read from the entry its @deprecated line names (package.json "exports")', () => {
    const wrong = found.filter((a) => subpaths.get(a.home) !== a.source);
    expect(wrong.map((a) => `${a.name}: says ${a.home}, reads ${a.source}`)).toEqual([]);
  });

  it.each([...subpaths.keys()].filter((key) => key !== 'package.json'))(
    "each moved to agent-machine/%s is that entry's own value",
    async (home) => {
      const entry = await load(subpaths.get(home) as string);
      const values = found.filter((a) => a.kind === 'const' && a.home === home);
      const different = values.filter(
        (a) =>
          !(a.name in entry) ||
          entry[a.name] !== (deprecated as Record<string, unknown>)[a.name] ||
          entry[a.name] !== (main as Record<string, unknown>)[a.name],
      );
      expect(different.map((a) => a.name)).toEqual([]);
    },
  );

  it("are each named in CHANGELOG.md's Unreleased section", () => {
    const changelog = read('CHANGELOG.md');
    const unreleased = changelog.slice(0, changelog.indexOf('\n## ', changelog.indexOf('## Unreleased')));
    expect([...deprecatedNames].filter((name) => !unreleased.includes(`\`${name}\``))).toEqual([]);
  });
});
