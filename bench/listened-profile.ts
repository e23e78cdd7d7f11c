/**
 * One variant of the loop-listened bench alone, for a CPU profile: RUNS 20-step runs of the
 * scripted driver, listened (LISTENED=1) or not, with the process CPU time they took.
 * `LISTENED=1 node --cpu-prof --import tsx bench/listened-profile.ts`, once with and once
 * without, and the two profiles compared by function.
 */
import { libraryAgent, question } from './workload';

const steps = 20;
const runs = Number(process.env.RUNS ?? 3_000);
const listenedRun = process.env.LISTENED === '1';
const agent = libraryAgent(steps);
const counts = new Map<string, number>();
const onEvent = (event: { type: string }) => {
  counts.set(event.type, (counts.get(event.type) ?? 0) + 1);
};
const run = () => (listenedRun ? agent.execute(question(), { onEvent }) : agent.execute(question()));
for (let i = 0; i < 300; i++) await run();
const before = process.cpuUsage();
for (let i = 0; i < runs; i++) await run();
const cpu = process.cpuUsage(before);
console.log(
  `${listenedRun ? 'listened' : 'unlistened'}: ${(((cpu.user + cpu.system) / runs / steps) | 0).toString()} µs CPU a step, ${runs} runs`,
);
if (listenedRun) console.log(Object.fromEntries([...counts].map(([type, n]) => [type, n / (runs + 300)])));
