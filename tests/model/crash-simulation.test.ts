import { describe, expect, it } from 'vitest';
import { countsLine, runCrashSimulation } from './support/crash-simulation';

describe('the crash simulation (a sample of `npm run matrix:sim`)', () => {
  it('crashes seeded agent scripts at every store write: no unsafe effect repeated, no acknowledged step lost, no approval id changed, every run finished', async () => {
    const counts = await runCrashSimulation(49, 4);
    console.log(`[crash-simulation] ${countsLine(counts)}`);
    expect(counts.crashes).toBeGreaterThan(20);
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
