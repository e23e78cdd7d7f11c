// The npm registry reachable here serves only this platform's optional packages (another
// platform's @esbuild/*, @rollup/*, @biomejs/cli-* answer 404), so `npm install` writes a lock
// without them and `npm ci` then refuses it as out of sync. This adds a bare optional entry for
// each missing optional dependency; `npm ci` accepts it and skips the package on this platform.
// Run after changing dependencies: `npm run lock:complete`.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = path === '' ? '' : `${path}/`;
    const nested = `${base}node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    const exact = exactVersion(name, version);
    if (exact === null || lock.packages[nested] || lock.packages[hoisted]?.version === exact) continue;
    const at = lock.packages[hoisted] ? nested : hoisted;
    lock.packages[at] = { version: exact, ...(entry.dev ? { dev: true } : {}), optional: true };
    added++;
  }
}
/** A lock entry needs an exact version: a range is resolved with `npm view`, or skipped if unknown. */
function exactVersion(name, spec) {
  if (/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(spec)) return spec;
  try {
    const out = execFileSync('npm', ['view', `${name}@${spec}`, 'version', '--json'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const versions = [JSON.parse(out)].flat();
    return versions.at(-1) ?? null;
  } catch {
    console.warn(`complete-lockfile: could not resolve ${name}@${spec}; left out`);
    return null;
  }
}

writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: ${added} optional entries added`);
