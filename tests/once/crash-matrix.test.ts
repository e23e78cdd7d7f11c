/**
 * A sample of the at-most-once crash matrix (the long version: `npm run matrix:once`): the payment
 * agent's children SIGKILLed at random moments over the file, SQLite and Redis stores, resumed and
 * decided until they finish. The seed is logged: a failing trial replays with ONCE_SEED=<seed>.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedisServer } from '../distributed/support/redis-server';
import { matrixPlan } from './support/matrix-plan';
import { type EffectMode, runTrial } from './support/once-matrix';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});

/**
 * Runs `modes`' trials until at least `minKills` kills landed (a child that finishes first is not
 * killed), expecting every count to hold.
 */
async function sample(modes: Readonly<Partial<Record<EffectMode, number>>>, minKills: number) {
  const seed = Number(process.env.ONCE_SEED ?? Date.now() % 100_000);
  console.log(`crash matrix sample (${Object.keys(modes).join(', ')}): ONCE_SEED=${seed}`);
  const { dir, trials } = matrixPlan({ seed, redis, trialsPerStore: modes, maxKills: 3 });
  let kills = 0;
  for (const trial of trials) {
    if (kills >= minKills) break;
    const { counts, killedIn } = await runTrial(trial);
    kills += killedIn.length;
    const where = `${trial.kind} ${trial.mode} seed ${trial.seed} (killed in ${killedIn.join(', ')})`;
    expect({ where, ...counts }).toMatchObject({
      where,
      repeatedUnsafeEffects: 0,
      lostAcknowledgedSteps: 0,
      repeatedModelCalls: 0,
      changedApprovalIds: 0,
      idempotentOverRuns: 0,
      changedIdempotencyKeys: 0,
      finished: true,
    });
    if (trial.mode !== 'idempotent') expect(counts.maxUnsafeEffectsWithoutApprove).toBeLessThanOrEqual(1);
  }
  expect(kills).toBeGreaterThanOrEqual(minKills);
  rmSync(dir, { recursive: true, force: true });
}

describe('at most once: a crash matrix sample (child processes killed at random)', () => {
  it('runs no unsafe effect twice unasked, loses no acknowledged step, repeats no answered model call, keeps approval ids and idempotency keys', async () => {
    await sample({ unsafe: 4, idempotent: 2 }, 12);
  }, 600_000);

  it('holds the same with the unsafe calls inside subagents (two levels: the root and its subagent calls)', async () => {
    await sample({ subagent: 3 }, 6);
  }, 600_000);
});
