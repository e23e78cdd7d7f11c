// Self time by function from a .cpuprofile (the main thread's): node top-functions.mjs <file> [count]
import fs from 'node:fs';

const prof = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
const time = new Map();
let total = 0;
prof.samples.forEach((id, i) => {
  const dt = prof.timeDeltas[i] ?? 0;
  total += dt;
  const { functionName, url, lineNumber } = nodes.get(id).callFrame;
  const key = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
  time.set(key, (time.get(key) ?? 0) + dt);
});
const rows = [...time].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[3] ?? 25));
for (const [key, t] of rows) console.log(`${((t / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
