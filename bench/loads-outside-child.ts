/**
 * One sample of `loads-outside.bench.ts`, in a fresh process: `<entry> <SQLite|file> <dir> <steps>`.
 * Imports the entry (only its public names), then five times: `JSON.parse` of the state's JSON, and
 * a store made and its `load` of the session; prints one line of JSON, each pair's times
 * `[parse ms, parse CPU ms, load ms, load CPU ms]`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

type Entry = typeof import('../src/index');

const [entry, kind, dir, stepsArg] = process.argv.slice(2) as [string, string, string, string];
const steps = Number(stepsArg);
/** Pairs a process: the first is its first load; the others, loads of a process that has loaded before. */
const PAIRS = 5;
const lib = (await import(pathToFileURL(entry).href)) as Entry;
const text = readFileSync(join(dir, `state-${steps}.json`), 'utf8');
const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

const open = () =>
  kind === 'SQLite'
    ? new lib.SqliteSessionStore(join(dir, 'sessions.db'))
    : new lib.FileSessionStore(join(dir, 'files'));

/** A JSON.parse of the state, then a load by a fresh store: their wall and CPU times, ms. */
async function pair(): Promise<number[]> {
  let start = nowMs();
  let cpuStart = cpuMs();
  JSON.parse(text);
  const parse = [nowMs() - start, cpuMs() - cpuStart];
  start = nowMs();
  cpuStart = cpuMs();
  const store = open();
  const loaded = await store.load(`load-${steps}`);
  const load = [nowMs() - start, cpuMs() - cpuStart];
  if (loaded?.state.stepCount() !== steps) throw new Error(`the ${steps}-step session did not load`);
  await store.close();
  return [...parse, ...load];
}

const pairs: number[][] = [];
for (let i = 0; i < PAIRS; i++) pairs.push(await pair());
console.log(JSON.stringify(pairs));
