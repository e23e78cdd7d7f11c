/**
 * `npm run matrix:settle`: the settle drill (settle-drill.ts) with the figures of #49 by default:
 * SETTLE_SESSIONS sessions (1,000, half with a reconcile) over SETTLE_WORKERS worker processes (4),
 * SETTLE_KILLS SIGKILLs (200) and SETTLE_PAUSES SIGSTOP/SIGCONT pauses (20), at most SETTLE_IN_FLIGHT
 * sessions at a time (16); SETTLE_SEED replays the
 * order of kills and pauses. Prints every count; exits non-zero when an effect was repeated without
 * an approve or a 'not-done', fewer than 90% of the interrupted calls whose tool reconciles were
 * settled without a person, a session is not complete, fewer kills or pauses landed than asked, or a
 * pause was not taken over, or a stale worker ran a call again after its SIGCONT in a session it held
 * (a stale worker whose lock renewal finds the lock gone halts before it tries a save: its refusal
 * is printed only when a save was tried first, so the refusals are counted, not required).
 */
import { runSettleDrill } from './settle-drill';

const seed = Number(process.env.SETTLE_SEED ?? Date.now() % 100_000);
const sessions = Number(process.env.SETTLE_SESSIONS ?? 1_000);
const kills = Number(process.env.SETTLE_KILLS ?? 200);
const pauses = Number(process.env.SETTLE_PAUSES ?? 20);
const workers = Number(process.env.SETTLE_WORKERS ?? 4);
const inFlight = Number(process.env.SETTLE_IN_FLIGHT ?? 16);
console.log(
  `settle drill: SETTLE_SEED=${seed}, ${sessions} sessions (half with a reconcile), ${workers} worker processes, ` +
    `${kills} SIGKILLs, ${pauses} SIGSTOP/SIGCONT pauses`,
);
const r = await runSettleDrill({
  seed,
  sessions,
  kills,
  pauses,
  inFlight,
  workers,
  log: (line) => console.log(`  ${line}`),
});
const settled = r.reconciled.done + r.reconciled.notDone;
const reconcilable = settled + r.reconcilableAskedOfPerson;
const share = reconcilable === 0 ? 1 : settled / reconcilable;
console.log(
  [
    `${r.complete} of ${r.sessions} sessions complete in ${r.seconds.toFixed(0)} s; not complete: ${JSON.stringify(r.failures)}`,
    `${r.kills} SIGKILLs, ${r.pauses} pauses (${r.pausesTakenOver} taken over by another worker, ${r.pausesRefused} stale workers' saves refused with SESSION_LOCK_LOST, ${r.staleEffects} calls a stale worker ran again after its SIGCONT)`,
    `interrupted calls whose tool reconciles: ${reconcilable}, settled without a person ${settled} (${(share * 100).toFixed(1)}%: ${r.reconciled.done} done, ${r.reconciled.notDone} not-done), asked of a person ${r.reconcilableAskedOfPerson}`,
    `interrupted calls whose tool does not reconcile, decided by a person: ${r.unreconcilableAskedOfPerson}`,
    `${r.repeatedUnjustified} unsafe effects repeated without an approve or a 'not-done' (${r.repeatedJustified} repeated with one)`,
  ].join('\n'),
);
const failed =
  r.repeatedUnjustified > 0 ||
  share < 0.9 ||
  r.complete !== r.sessions ||
  r.kills !== kills ||
  r.pauses !== pauses ||
  r.pausesTakenOver !== r.pauses ||
  r.staleEffects > 0;
process.exit(failed ? 1 : 0);
