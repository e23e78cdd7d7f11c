/**
 * The per-run fixed cost, alone: the N-step workload of the peers bench's reference row
 * (`createAgent({ model })`, bench/peers/agent-machine-model.ts) run RUNS times in sequence, with
 * the process CPU time it took. For a profile:
 * `STEPS=1 node --cpu-prof --import tsx bench/short-run-profile.ts`.
 */
import { agentMachineModelAdapter } from './peers/agent-machine-model';
import { aiSdkAdapter } from './peers/ai-sdk';

const steps = Number(process.env.STEPS ?? 1);
const runs = Number(process.env.RUNS ?? 20_000);
const adapter = process.env.LIB === 'ai' ? aiSdkAdapter : agentMachineModelAdapter;
const workload = await adapter.setup(steps);
for (let i = 0; i < 2_000; i++) await workload.run();
const before = process.cpuUsage();
const start = performance.now();
for (let i = 0; i < runs; i++) await workload.run();
const cpu = process.cpuUsage(before);
const wall = performance.now() - start;
console.log(
  `${adapter.name}, N=${steps}: ${(((cpu.user + cpu.system) / runs) | 0).toString()} µs CPU a run ` +
    `(${((wall * 1000) / runs).toFixed(1)} µs wall), ${runs} runs`,
);
