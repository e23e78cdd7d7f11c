/**
 * A small sample of `npm run matrix:pool` (tests/distributed/support/pool-drill.ts): 12 sessions
 * over three worker processes, two of them SIGKILLed while busy and replaced, every session
 * complete; and Redis restarted without persistence mid-run: every job not finished before rejects
 * with JOB_LOST (none waits for its timeout).
 */
import { describe, expect, it } from 'vitest';
import { runKillDrill, runRestartDrill } from './support/pool-drill';

describe('the pool drills, a small sample', () => {
  it('12 sessions, 2 SIGKILLs of busy workers: 12 of 12 complete', async () => {
    const seed = Date.now() % 100_000;
    const result = await runKillDrill({ sessions: 12, kills: 2, seed, workers: 3, concurrency: 2 });
    expect(result.kills, `seed ${seed}`).toBe(2);
    expect(result.failures, `seed ${seed}`).toEqual({});
    expect(result.complete).toBe(12);
  }, 240_000);

  it('Redis restarted without persistence: each job not finished rejects with JOB_LOST', async () => {
    // 4 job slots for 8 sessions: some are still waiting at the restart
    const result = await runRestartDrill({
      persistence: 'none',
      sessions: 8,
      concurrency: 2,
      restartAfterCalls: 2,
      timeoutMs: 90_000,
    });
    expect(result.failures).toEqual({});
    expect(result.timedOut).toBe(0);
    expect(result.completedAfter).toBe(0);
    expect(result.lost).toBeGreaterThan(0);
    expect(result.completedBefore + result.lost).toBe(8);
  }, 180_000);
});
