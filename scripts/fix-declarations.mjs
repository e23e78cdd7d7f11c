// The declarations `tsc -p tsconfig.build.json` emits keep the sources' extensionless relative
// imports (`from './drivers/driver'`), which `moduleResolution: node16/nodenext` cannot resolve.
// TypeScript 7 has no JS API for a bundler to rewrite them, so this step does, after the build:
// each relative specifier gets the extension of the file it names (`./drivers/driver.js`,
// `./distributed/index.js`). It also writes a `.d.cts` twin of every declaration (specifiers
// ending in `.cjs`), the types of the CommonJS entry: a `.d.ts` in a `"type": "module"` package is
// ESM to TypeScript, which a CommonJS project under node16/nodenext could not `require`.
// Run by `npm run build`: `node scripts/fix-declarations.mjs dist/types`.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? 'dist/types');
// Module augmentations (`declare module './nested-state'`) name their module by a specifier too.
const specifier =
  /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\bdeclare\s+module\s+)(['"])(\.{1,2}(?:\/[^'"]*)?)\2/g;

let files = 0;
for (const file of declarations(root)) {
  const source = readFileSync(file, 'utf8');
  const rewrite = (extension) =>
    source.replace(specifier, (_all, keyword, quote, path) => {
      return `${keyword}${quote}${withExtension(dirname(file), path, extension)}${quote}`;
    });
  writeFileSync(file, rewrite('.js'));
  writeFileSync(file.replace(/\.d\.ts$/, '.d.cts'), rewrite('.cjs'));
  files++;
}
console.log(`fix-declarations: ${files} declaration files in ${root} (+ .d.cts twins)`);

function withExtension(directory, path, extension) {
  if (/\.(c|m)?js$/.test(path)) return path.replace(/\.(c|m)?js$/, extension);
  if (existsSync(join(directory, `${path}.d.ts`))) return `${path}${extension}`;
  if (existsSync(join(directory, path, 'index.d.ts'))) return `${path.replace(/\/$/, '')}/index${extension}`;
  throw new Error(`fix-declarations: ${path} (imported in ${directory}) names no declaration file`);
}

function* declarations(directory) {
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) yield* declarations(path);
    else if (name.endsWith('.d.ts')) yield path;
  }
}
