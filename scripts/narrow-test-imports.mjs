#!/usr/bin/env node
/**
 * Rewrites named imports of the main entry (`from '../../src/index'`) in tests/ into
 * imports of the modules that define each name, so that `vitest related <file>` runs the tests of
 * a change (a test that imports src/index.ts depends on every module). Mechanical and idempotent:
 * run it after merging new tests, then `npm run typecheck` and `npx biome check --write tests examples`.
 *
 *   node scripts/narrow-test-imports.mjs            # rewrite
 *   node scripts/narrow-test-imports.mjs --check    # list the files it would change; exit 1 if any
 *
 * Names are followed through `export { a as b } from`, `export * from`, `export { a }` of an import,
 * and the main entry's deprecated aliases (`export const x = internal.x`). `import * as` and dynamic
 * `import()` of the main entry are left as they are (those test the entry itself), and so are
 * examples/ and tests' fixtures (they stand for an app, which imports the package).
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const MAIN = join(root, 'src/index.ts');
const check = process.argv.includes('--check');

function moduleFile(from, specifier) {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), base.replace(/\.js$/, '.ts')])
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  throw new Error(`${relative(root, from)}: cannot resolve '${specifier}'`);
}

const parsed = new Map();
/** A module's exports: declared names, `export { … } from`, `export *`, local re-exports, aliases of namespaces. */
function parse(file) {
  if (parsed.has(file)) return parsed.get(file);
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const info = {
    declared: new Set(),
    named: new Map(),
    stars: [],
    imports: new Map(),
    namespaces: new Map(),
    aliases: new Map(),
  };
  for (const m of text.matchAll(
    /^export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:abstract\s+)?(?:function\*?|class|const|let|var|type|interface|enum|namespace)\s+([A-Za-z_$][\w$]*)/gm,
  ))
    info.declared.add(m[1]);
  for (const m of text.matchAll(/^export\s+(?:const|type)\s+([\w$]+)\s*=\s*([\w$]+)\.([\w$]+)\s*;/gm))
    info.aliases.set(m[1], { namespace: m[2], name: m[3] });
  for (const m of text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'([^']+)'/gm)) {
    const target = moduleFile(file, m[2]);
    for (const spec of specifiers(m[1])) info.named.set(spec.local, { file: target, name: spec.imported });
  }
  for (const m of text.matchAll(/^export\s+\*\s+from\s*'([^']+)'/gm)) info.stars.push(moduleFile(file, m[1]));
  for (const m of text.matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'([^']+)'/gm)) {
    if (!m[2].startsWith('.')) continue;
    const target = moduleFile(file, m[2]);
    for (const spec of specifiers(m[1])) info.imports.set(spec.local, { file: target, name: spec.imported });
  }
  for (const m of text.matchAll(/^import\s+\*\s+as\s+([\w$]+)\s+from\s*'([^']+)'/gm))
    if (m[2].startsWith('.')) info.namespaces.set(m[1], moduleFile(file, m[2]));
  for (const m of text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}\s*;/gm))
    for (const spec of specifiers(m[1])) {
      const imported = info.imports.get(spec.imported);
      if (imported) info.named.set(spec.local, imported);
      else info.declared.add(spec.local);
    }
  parsed.set(file, info);
  return info;
}

/** `a, type b, c as d` → [{ imported, local, type }] */
function specifiers(list) {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const type = s.startsWith('type ');
      const [imported, local = imported] = s.replace(/^type\s+/, '').split(/\s+as\s+/);
      return { imported: imported.trim(), local: local.trim(), type };
    });
}

/** The module that defines `name` as exported by `file`, and its name there. */
function definition(file, name, seen = new Set()) {
  const key = `${file}#${name}`;
  if (seen.has(key)) return null;
  seen.add(key);
  const info = parse(file);
  const alias = info.aliases.get(name);
  if (alias && info.namespaces.has(alias.namespace))
    return definition(info.namespaces.get(alias.namespace), alias.name, seen);
  if (info.declared.has(name)) return { file, name };
  const named = info.named.get(name);
  if (named) return definition(named.file, named.name, seen);
  for (const star of info.stars) {
    const found = definition(star, name, seen);
    if (found) return found;
  }
  return null;
}

function specifierFrom(from, file) {
  let path = relative(dirname(from), file).replace(/\.tsx?$/, '');
  if (!path.startsWith('.')) path = `./${path}`;
  return path;
}

function rewrite(file) {
  const text = readFileSync(file, 'utf8');
  const pattern = /^import\s+(type\s+)?\{([^}]*)\}\s*from\s*'([^']+)';?[ \t]*$/gm;
  let changed = false;
  const out = text.replace(pattern, (whole, typeOnly, list, spec) => {
    if (!spec.startsWith('.') || moduleFile(file, spec) !== MAIN) return whole;
    const groups = new Map();
    for (const s of specifiers(list)) {
      const found = definition(MAIN, s.imported);
      if (!found)
        throw new Error(
          `${relative(root, file)}: '${s.imported}' is not defined by a module the main entry exports`,
        );
      const target = specifierFrom(file, found.file);
      if (!groups.has(target)) groups.set(target, []);
      const name = found.name === s.local ? found.name : `${found.name} as ${s.local}`;
      groups.get(target).push(`${s.type && !typeOnly ? 'type ' : ''}${name}`);
    }
    changed = true;
    return [...groups.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([target, names]) => `import ${typeOnly ?? ''}{ ${names.join(', ')} } from '${target}';`)
      .join('\n');
  });
  if (changed && out !== text) {
    if (!check) writeFileSync(file, out);
    return true;
  }
  return false;
}

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'fixtures') yield* files(path);
    } else if (/\.tsx?$/.test(entry.name)) yield path;
  }
}

const changed = [];
for (const file of files(join(root, 'tests'))) if (rewrite(file)) changed.push(relative(root, file));
console.log(
  `${check ? 'would rewrite' : 'rewrote'} ${changed.length} files${changed.length ? `:\n  ${changed.join('\n  ')}` : ''}`,
);
if (check && changed.length > 0) process.exit(1);
