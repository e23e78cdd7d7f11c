import { describe, expect, it } from 'vitest';
import { countsLine, runCrashSimulation } from './support/crash-simulation';

describe('the crash simulation (a sample of `npm run matrix:sim`)', () => {
  it('crashes seeded agent scripts (with subagents) at every store write, lost and landed: no unsafe effect repeated, no acknowledged step lost, no approval id changed, every run finished', async () => {
    const counts = await runCrashSimulation({ seed: 8, scripts: 2 });
    console.log(`[crash-simulation] ${countsLine(counts)}`);
    // the sample takes in subagents and interrupted calls settled by their tool's reconcile
    expect(counts.crashes).toBeGreaterThan(40);
    expect(counts.subagentCrashes).toBeGreaterThan(0);
    expect(counts.reconcileAnswers).toBeGreaterThan(0);
    expect(counts.reconcilableAskedOfAPerson).toBe(0);
    expect(countsLine(counts)).toBe(
      countsLine({
        ...counts,
        repeatedUnsafeEffects: 0,
        lostAcknowledgedSteps: 0,
        changedApprovalIds: 0,
        unfinishedRuns: 0,
      }),
    );
  }, 120_000);
});
