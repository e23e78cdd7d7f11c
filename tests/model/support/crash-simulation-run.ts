/**
 * `npm run matrix:sim`: the crash simulation over SIM_SCRIPTS seeded scripts (default 12,000, about
 * 100,000 simulated crashes) from SIM_SEED (default 49). Its last line is the counts line.
 */
import { countsLine, runCrashSimulation } from './crash-simulation';

const scripts = Number(process.env.SIM_SCRIPTS ?? 12_000);
const seed = Number(process.env.SIM_SEED ?? 49);
const counts = await runCrashSimulation(seed, scripts);
console.log(countsLine(counts));
process.exitCode =
  counts.repeatedUnsafeEffects +
    counts.lostAcknowledgedSteps +
    counts.changedApprovalIds +
    counts.unfinishedRuns >
  0
    ? 1
    : 0;
