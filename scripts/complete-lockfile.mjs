// The npm registry reachable here serves only this platform's optional packages (another
// platform's @esbuild/*, @rollup/*, @biomejs/cli-* answer 404), so `npm install` writes a lock
// without them and `npm ci` then refuses it as out of sync. This adds a bare optional entry for
// each missing optional dependency; `npm ci` accepts it and skips the package on this platform.
// Run after changing dependencies: `npm run lock:complete`.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = path === '' ? '' : `${path}/`;
    const nested = `${base}node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    if (lock.packages[nested] || lock.packages[hoisted]?.version === version) continue;
    const at = lock.packages[hoisted] ? nested : hoisted;
    lock.packages[at] = { version, ...(entry.dev ? { dev: true } : {}), optional: true };
    added++;
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: ${added} optional entries added`);
