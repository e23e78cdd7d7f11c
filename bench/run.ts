/**
 * `npm run bench [name...]`: runs every benchmark in this folder (or those named) in one process,
 * so that the figures they compare are measured side by side.
 */
import { readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)))
  .sort();

console.log(
  `node ${process.version}, ${process.platform} ${process.arch}, gc exposed: ${typeof (globalThis as { gc?: unknown }).gc === 'function'}`,
);
for (const file of files) {
  const module = (await import(`./${file}`)) as { default: () => Promise<void> };
  console.log(`\n=== ${file}`);
  await module.default();
}
