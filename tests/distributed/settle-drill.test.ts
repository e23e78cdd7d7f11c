/**
 * A small sample of `npm run matrix:settle` (tests/distributed/support/settle-drill.ts): ledger
 * sessions with unsafe calls (half with a reconcile) over four worker processes, busy workers
 * SIGKILLed and one SIGSTOPped until another worker takes its session over, then SIGCONTed.
 */
import { describe, expect, it } from 'vitest';
import { runSettleDrill } from './support/settle-drill';

describe('the settle drill, a small sample', () => {
  it('kills and a pause past the lock: no unsafe effect repeated without an approve or a not-done, interrupted calls whose tool reconciles settled without a person, the paused worker taken over and without an effect after SIGCONT', async () => {
    const seed = Date.now() % 100_000;
    const r = await runSettleDrill({ seed, sessions: 24, kills: 2, pauses: 1, inFlight: 8 });
    const why = `seed ${seed}: ${JSON.stringify(r)}`;
    expect(r.failures, why).toEqual({});
    expect(r.complete, why).toBe(24);
    expect(r.kills, why).toBe(2);
    expect(r.pauses, why).toBe(1);
    expect(r.pausesTakenOver, why).toBe(1);
    expect(r.staleEffects, why).toBe(0);
    expect(r.repeatedUnjustified, why).toBe(0);
    expect(r.reconcilableAskedOfPerson, why).toBe(0);
  }, 600_000);
});
