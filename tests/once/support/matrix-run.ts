/**
 * The long at-most-once crash matrix (`npm run matrix:once`): ONCE_TRIALS sessions per store and
 * effect mode (default 60 unsafe, 30 idempotent and 30 with the unsafe calls inside subagents: over
 * 400 kills), then ONCE_POOL_TRIALS worker pool trials (default 20); every count printed (the
 * subagent trials' also apart), and a failing count exits non-zero. ONCE_SEED replays a run.
 */
import { startRedisServer } from '../../distributed/support/redis-server';
import { matrixPlan } from './matrix-plan';
import { type Counts, runTrial } from './once-matrix';
import { runPoolTrial } from './pool-matrix';

const seed = Number(process.env.ONCE_SEED ?? Date.now() % 100_000);
const perStore = Number(process.env.ONCE_TRIALS ?? 60);
const redis = await startRedisServer();
const counted = () => ({
  kills: 0,
  trials: 0,
  repeatedUnsafeEffects: 0,
  maxUnsafeEffectsWithoutApprove: 0,
  lostAcknowledgedSteps: 0,
  repeatedModelCalls: 0,
  changedApprovalIds: 0,
  idempotentOverRuns: 0,
  changedIdempotencyKeys: 0,
  unfinished: 0,
  interrupted: { approve: 0, reject: 0, complete: 0 },
});
const totals = counted();
/** The trials whose unsafe calls ran inside subagents, counted apart too. */
const subagentTotals = counted();
const pool = {
  trials: 0,
  kills: 0,
  repeatedUnsafeEffects: 0,
  unfinished: 0,
  interrupted: { approve: 0, reject: 0, complete: 0 },
};
const killsByStore: Record<string, number> = {};
const killsByState: Record<string, number> = {};
console.log(`crash matrix: ONCE_SEED=${seed}, ${perStore} trials per store and effect mode`);
try {
  const { dir, trials } = matrixPlan({
    seed,
    redis,
    trialsPerStore: {
      unsafe: perStore,
      idempotent: perStore / 2,
      subagent: Number(process.env.ONCE_SUBAGENT_TRIALS ?? perStore / 2),
    },
    maxKills: 3,
  });
  console.log(`stores and trial logs in ${dir}`);
  for (const trial of trials) {
    const { counts, killedIn } = await runTrial(trial);
    killsByStore[trial.kind] = (killsByStore[trial.kind] ?? 0) + killedIn.length;
    for (const state of killedIn) killsByState[state] = (killsByState[state] ?? 0) + 1;
    add(totals, counts, killedIn.length);
    if (trial.mode === 'subagent') add(subagentTotals, counts, killedIn.length);
    if (failed(counts)) console.log(`FAILED trial seed ${trial.seed}`, trial, counts);
  }
  // through the worker pool: a worker killed at a random moment, another takes the session over
  const poolTrials = Number(process.env.ONCE_POOL_TRIALS ?? 20);
  for (let i = 0; i < poolTrials; i++) {
    const result = await runPoolTrial(redis, dir, seed * 1000 + 900 + i);
    pool.trials++;
    pool.kills += result.killed ? 1 : 0;
    pool.repeatedUnsafeEffects += result.repeatedUnsafeEffects;
    pool.unfinished += result.completed ? 0 : 1;
    for (const k of ['approve', 'reject', 'complete'] as const) pool.interrupted[k] += result.interrupted[k];
    if (result.repeatedUnsafeEffects > 0 || !result.completed) console.log('FAILED pool trial', result);
  }
} finally {
  await redis.stop();
}
console.log(
  JSON.stringify({ seed, totals, subagentTotals, killsByStore, killsByState, workerPool: pool }, null, 2),
);
process.exit(failed(totals) || pool.repeatedUnsafeEffects > 0 || pool.unfinished > 0 ? 1 : 0);

function add(totals: ReturnType<typeof counted>, counts: Counts, kills: number): void {
  totals.trials++;
  totals.kills += kills;
  totals.repeatedUnsafeEffects += counts.repeatedUnsafeEffects;
  totals.maxUnsafeEffectsWithoutApprove = Math.max(
    totals.maxUnsafeEffectsWithoutApprove,
    counts.maxUnsafeEffectsWithoutApprove,
  );
  totals.lostAcknowledgedSteps += counts.lostAcknowledgedSteps;
  totals.repeatedModelCalls += counts.repeatedModelCalls;
  totals.changedApprovalIds += counts.changedApprovalIds;
  totals.idempotentOverRuns += counts.idempotentOverRuns;
  totals.changedIdempotencyKeys += counts.changedIdempotencyKeys;
  totals.unfinished += counts.finished ? 0 : 1;
  for (const k of ['approve', 'reject', 'complete'] as const) totals.interrupted[k] += counts.interrupted[k];
}

function failed(
  c: Omit<Counts, 'interrupted' | 'finished'> & { unfinished?: number; finished?: boolean },
): boolean {
  return (
    c.repeatedUnsafeEffects > 0 ||
    c.maxUnsafeEffectsWithoutApprove > 1 ||
    c.lostAcknowledgedSteps > 0 ||
    c.repeatedModelCalls > 0 ||
    c.changedApprovalIds > 0 ||
    c.idempotentOverRuns > 0 ||
    c.changedIdempotencyKeys > 0 ||
    (c.unfinished ?? 0) > 0 ||
    c.finished === false
  );
}
