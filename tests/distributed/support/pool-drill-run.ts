/**
 * `npm run matrix:pool`: the worker pool's kill drill (POOL_SESSIONS sessions, default 200, and
 * POOL_KILLS SIGKILLs of workers, default 20; POOL_SEED replays the kill moments), then the
 * Redis-restart drill with each persistence setting (POOL_RESTART_SESSIONS sessions each, default
 * 60). Prints `X of N complete` and every count; exits non-zero when a session of the kill drill is
 * not complete, fewer kills landed than asked, or a job of the restart drill without persistence
 * waited for its timeout instead of rejecting with JOB_LOST.
 */

import { runKillDrill, runRestartDrill } from './pool-drill';
import type { RedisPersistence } from './restartable-redis';

const seed = Number(process.env.POOL_SEED ?? Date.now() % 100_000);
const sessions = Number(process.env.POOL_SESSIONS ?? 200);
const kills = Number(process.env.POOL_KILLS ?? 20);
const restartSessions = Number(process.env.POOL_RESTART_SESSIONS ?? 60);
let failed = false;

// POOL_SESSIONS=0 skips the kill drill
if (sessions > 0) {
  console.log(`kill drill: POOL_SEED=${seed}, ${sessions} sessions, ${kills} SIGKILLs of worker processes`);
  const drill = await runKillDrill({ sessions, kills, seed, log: (line) => console.log(`  ${line}`) });
  console.log(
    `${drill.complete} of ${drill.sessions} complete, ${drill.kills} kills, ${drill.seconds.toFixed(1)} s`,
  );
  if (Object.keys(drill.failures).length > 0) console.log('not complete:', JSON.stringify(drill.failures));
  if (drill.complete !== drill.sessions || drill.kills !== kills) failed = true;
}

// POOL_RESTART_SESSIONS=0 skips the restart drill
for (const persistence of (restartSessions > 0 ? ['none', 'everysec', 'always'] : []) as RedisPersistence[]) {
  const r = await runRestartDrill({ persistence, sessions: restartSessions });
  const wait = r.longestLostWaitMs === null ? '-' : `${(r.longestLostWaitMs / 1000).toFixed(1)} s`;
  console.log(
    `restart drill (${persistence === 'none' ? 'no persistence' : `--appendonly yes --appendfsync ${persistence}`}): ` +
      `${r.sessions} sessions, ${r.completedBefore} completed before the restart, ${r.completedAfter} after, ` +
      `${r.lost} JOB_LOST (longest wait after the restart ${wait}), ${r.timedOut} timed out, ` +
      `failed: ${JSON.stringify(r.failures)}`,
  );
  if (persistence === 'none' && r.timedOut > 0) failed = true;
}
process.exit(failed ? 1 : 0);
