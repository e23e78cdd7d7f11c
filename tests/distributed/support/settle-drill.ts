/**
 * The settle drill (#49, `npm run matrix:settle`; a small sample in tests/distributed/settle-drill.test.ts):
 * worker processes (createAgentWorker, one redis-server on a loopback port) run ledger sessions whose
 * `record` calls are unsafe, half of them with a reconcile; meanwhile busy workers are SIGKILLed
 * (each replaced by a new process) and paused (SIGSTOP until another worker holds a session lock the
 * paused one held, then SIGCONT: the stale worker goes on, and its saves must be refused with
 * SESSION_LOCK_LOST). The drill is the person: a call that waits as interrupted is completed when the
 * ledger holds its effect, approved otherwise.
 *
 * Effects are counted outside the library: each `record` call appends a line to the ledger file and
 * each reconcile answer one to `<ledger>.reconciles` (O_APPEND writes, which a SIGKILL cannot undo).
 * A call's effect repeated is allowed only by an `approve` of it or a reconcile's `'not-done'`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { type AgentClient, type AgentJob, createAgentClient } from '../../../src/distributed/agent-client';
import type { ApprovalInput } from '../../../src/state/approval';
import { seeded } from '../../once/support/once-matrix';
import { LEDGER_ANSWER, LEDGER_STEPS, ledgerState, readLedger } from './ledger-agent';
import { startRedisServer } from './redis-server';
import {
  countEffects,
  freshWriter,
  LedgerTail,
  lockHolders,
  pause,
  sleep,
  staleEffects,
  waitFor,
} from './settle-drill-probes';
import type { WorkerProcessConfig } from './worker-process';
import { startWorkerProcess, type WorkerProcess } from './worker-processes';

export interface SettleDrillOptions {
  /**
   * Sessions (default 1,000), half of them with a reconcile; at most `inFlight` (default 16) at a
   * time, and no more than the kills and pauses keep up with.
   */
  readonly sessions?: number;
  readonly inFlight?: number;
  /** SIGKILLs of busy workers (default 200) and SIGSTOP/SIGCONT pauses (default 20), spread over the sessions. */
  readonly kills?: number;
  readonly pauses?: number;
  readonly seed: number;
  /** Worker processes (default 4), each `concurrency` jobs at a time (default 4). */
  readonly workers?: number;
  readonly concurrency?: number;
  /** Delay of each model call (default 50 ms) and of each tool call after its effect (default 200 ms). */
  readonly modelDelayMs?: number;
  readonly toolDelayMs?: number;
  /** The workers' job lock and session lock (defaults 4,000 and 3,000 ms): a pause outlasts both. */
  readonly lockDurationMs?: number;
  readonly sessionLockTtlMs?: number;
  /** The longest a pause waits for another worker to take a session over (default 120 s). */
  readonly pauseTimeoutMs?: number;
  readonly log?: (line: string) => void;
}

export interface SettleDrillResult {
  readonly sessions: number;
  readonly complete: number;
  readonly kills: number;
  readonly pauses: number;
  /** Pauses during which another worker took over a session the paused one held. */
  readonly pausesTakenOver: number;
  /** Pauses after which the stale worker reported SESSION_LOCK_LOST (a save refused). */
  readonly pausesRefused: number;
  /** Calls a paused worker ran again after its SIGCONT in the sessions it held (must be 0). */
  readonly staleEffects: number;
  /** Effects repeated without an approve or a 'not-done' (must be 0), and repeated with one. */
  readonly repeatedUnjustified: number;
  readonly repeatedJustified: number;
  /** Interrupted calls of tools with a reconcile: settled by it (done / not-done), and asked of the person. */
  readonly reconciled: { readonly done: number; readonly notDone: number };
  readonly reconcilableAskedOfPerson: number;
  /** Interrupted calls of tools without one, decided by the person. */
  readonly unreconcilableAskedOfPerson: number;
  /** Sessions not complete, by why. */
  readonly failures: Readonly<Record<string, number>>;
  readonly seconds: number;
}

const RECONCILE = 'ledger-reconcile';
const UNSAFE = 'ledger-unsafe';

export async function runSettleDrill(options: SettleDrillOptions): Promise<SettleDrillResult> {
  const sessions = options.sessions ?? 1_000;
  const kills = options.kills ?? 200;
  const pauses = options.pauses ?? 20;
  const log = options.log ?? (() => undefined);
  const random = seeded(options.seed);
  const server = await startRedisServer();
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-settle-'));
  const ledger = join(dir, 'ledger.txt');
  const queueName = `settle-${randomUUID()}`;
  const config = (tag: string): WorkerProcessConfig => ({
    port: server.port,
    queueName,
    storePrefix: `${queueName}:`,
    ledger,
    tag,
    concurrency: options.concurrency ?? 4,
    modelDelayMs: options.modelDelayMs ?? 50,
    toolDelayMs: options.toolDelayMs ?? 200,
    lockDurationMs: options.lockDurationMs ?? 4_000,
    stalledIntervalMs: 1_000,
    sessionLockTtlMs: options.sessionLockTtlMs ?? 3_000,
    busyRetryDelayMs: 200,
    // a session a few kills in a row land in is taken over again, not failed as a poison session
    maxSessionCrashes: 1_000,
  });
  const all: WorkerProcess[] = [];
  const live: WorkerProcess[] = [];
  const starting: Promise<unknown>[] = [];
  let started = 0;
  const startWorker = async (tag: string) => {
    // a loaded machine may take long to start one
    const worker = await startWorkerProcess(config(tag), 180_000);
    all.push(worker);
    live.push(worker);
  };
  const redis = new Redis(server.connection);
  const client = await createAgentClient({ connection: server.connection, queueName });
  const person = { approved: new Map<string, number>(), reconcilable: 0, unreconcilable: 0 };
  const began = Date.now();
  try {
    await Promise.all(Array.from({ length: options.workers ?? 4 }, (_, i) => startWorker(`w${i + 1}`)));
    // the kills and pauses, in a seeded order, each once its share of the sessions has ended; the
    // sessions start no faster than the kills and pauses land (a new worker may take long to start)
    const events = [...Array<'kill'>(kills).fill('kill'), ...Array<'pause'>(pauses).fill('pause')];
    const tail = new LedgerTail(ledger);
    const outcomes: Promise<string>[] = [];
    let completed = 0;
    let eventsDone = 0;
    const inFlight = options.inFlight ?? 16;
    const pump = () => {
      // no more sessions start than the next event's share (a new worker may take long to start),
      // but a few when none runs while the pool is ready for the event (it needs a busy worker)
      const share = (e: number) => Math.floor((e * sessions) / (events.length + 1));
      const idle = started === completed && live.length >= 3;
      const allowed =
        eventsDone >= events.length
          ? sessions
          : Math.max(share(eventsDone + 1) + inFlight, idle ? completed + 4 : 0);
      while (started < sessions && started < completed + inFlight && started < allowed) {
        const i = started++;
        outcomes.push(
          driveSession(client, i, ledger, person).finally(() => {
            completed++;
            pump();
          }),
        );
      }
    };
    pump();

    for (let i = events.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [events[i], events[j]] = [events[j] as 'kill' | 'pause', events[i] as 'kill' | 'pause'];
    }
    let killed = 0;
    const pauseResults: {
      takenOver: boolean;
      refused: boolean;
      worker: string;
      held: readonly string[];
      /** The ledger's length when the worker was SIGCONTed. */
      at: number;
    }[] = [];
    const watching: Promise<void>[] = [];
    for (const [e, event] of events.entries()) {
      const due = Math.floor((e * sessions) / (events.length + 1));
      // a victim: a live worker holding a session, with two more live workers to go on
      let victim: WorkerProcess | undefined;
      let held: string[] = [];
      for (;;) {
        if (completed >= sessions) break;
        pump();
        if (completed >= due && live.length >= 3) {
          // three in four land inside a call (a worker that has just written an effect and is in
          // its tool's delay), the others at a random moment of a worker that holds a session
          // (a pause always: the stale worker's next step is then the step's save, to be refused)
          const inside = event === 'pause' || random() < 0.75 ? await freshWriter(tail, live, 2_000) : null;
          if (!inside) await sleep(random() * 300);
          const holders = await lockHolders(redis);
          const busy = live.filter((w) => holders.has(w.tag));
          victim = inside ?? busy[Math.floor(random() * busy.length)];
          if (victim) {
            held = holders.get(victim.tag) ?? [];
            break;
          }
        }
        await sleep(50);
      }
      if (!victim) {
        log(`${event} ${e + 1}: no victim, all sessions ended`);
        break;
      }
      if (event === 'kill') {
        live.splice(live.indexOf(victim), 1);
        await victim.kill();
        killed++;
        eventsDone++;
        log(`kill ${killed}: ${victim.tag}, ${completed} sessions ended, ${secondsSince(began)} s`);
        const replacement = startWorker(`r${killed}`);
        replacement.catch(() => undefined);
        starting.push(replacement);
      } else {
        const result = await pause(victim, held, redis, ledger, options.pauseTimeoutMs ?? 120_000);
        eventsDone++;
        pauseResults.push({
          takenOver: result.takenOver,
          refused: false,
          worker: victim.tag,
          held,
          at: result.resumedAt,
        });
        const index = pauseResults.length - 1;
        // the stale worker goes on: its next save is refused, reported on its output
        watching.push(
          waitFor(() => /SESSION_LOCK_LOST/.test(victim.output().slice(result.outputAt)), 60_000).then(
            (refused) => {
              (pauseResults[index] as { refused: boolean }).refused = refused;
              if (!refused)
                log(
                  `pause ${index + 1}: ${victim.tag} said after SIGCONT: ${victim.output().slice(result.outputAt).slice(-600)}`,
                );
            },
          ),
        );
        log(
          `pause ${pauseResults.length}: ${victim.tag} for ${(result.ms / 1000).toFixed(1)} s, ` +
            `${result.takenOver ? 'taken over' : 'NOT taken over'}, ${secondsSince(began)} s`,
        );
      }
    }
    eventsDone = events.length;
    pump();
    while (started < sessions) await sleep(100);
    const ends = await Promise.all(outcomes);
    await Promise.all(watching);
    await Promise.all(starting);
    const failures: Record<string, number> = {};
    for (const end of ends) if (end !== 'complete') failures[end] = (failures[end] ?? 0) + 1;
    const counted = countEffects(ledger, person.approved);
    return {
      sessions,
      complete: ends.filter((end) => end === 'complete').length,
      kills: killed,
      pauses: pauseResults.length,
      pausesTakenOver: pauseResults.filter((p) => p.takenOver).length,
      pausesRefused: pauseResults.filter((p) => p.refused).length,
      staleEffects: staleEffects(ledger, pauseResults),
      ...counted,
      reconcilableAskedOfPerson: person.reconcilable,
      unreconcilableAskedOfPerson: person.unreconcilable,
      failures,
      seconds: (Date.now() - began) / 1000,
    };
  } finally {
    for (const w of all) w.child.kill('SIGCONT');
    await Promise.all(all.map((w) => w.kill()));
    await client.close();
    redis.disconnect();
    await server.stop();
    if (process.env.SETTLE_KEEP) log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs session `i` to its end: its execute job, then, while it waits, decide jobs (the person: an
 * interrupted call whose effect is in the ledger is completed, else approved). Resolves with
 * 'complete' or why not.
 */
async function driveSession(
  client: AgentClient,
  i: number,
  ledger: string,
  person: { approved: Map<string, number>; reconcilable: number; unreconcilable: number },
): Promise<string> {
  const sessionId = `settle-${i}`;
  const agent = i % 2 === 0 ? RECONCILE : UNSAFE;
  let job: AgentJob = await client.execute({ agent, sessionId, state: ledgerState(sessionId) });
  for (let round = 0; round < 20; round++) {
    let result: Awaited<ReturnType<AgentJob['finished']>>;
    try {
      result = await job.finished({ timeoutMs: 600_000 });
    } catch (error) {
      return `job failed: ${String((error as Error)?.message ?? error).slice(0, 120)}`;
    }
    const pending = result.state.pendingApprovals();
    if (pending.length === 0) {
      if (result.status !== 'completed') return `${result.status}, ${result.state.stepCount()} steps`;
      const ok = result.state.stepCount() === LEDGER_STEPS && result.state.finalResponse() === LEDGER_ANSWER;
      return ok ? 'complete' : `completed wrong: ${result.state.stepCount()} steps`;
    }
    const effects = new Set(readLedger(ledger).map((l) => `${l.session} ${l.callId}`));
    const decisions: ApprovalInput[] = pending.map((p) => {
      if (p.reason === 'interrupted') {
        if (agent === RECONCILE) person.reconcilable++;
        else person.unreconcilable++;
      }
      const key = `${sessionId} ${p.toolCallId}`;
      if (p.reason === 'interrupted' && effects.has(key))
        return { toolCallId: p.toolCallId, signature: p.signature, type: 'complete', result: 'recorded' };
      if (p.reason === 'interrupted') person.approved.set(key, (person.approved.get(key) ?? 0) + 1);
      return { toolCallId: p.toolCallId, signature: p.signature, type: 'approve' };
    });
    job = await client.decide({ agent, sessionId, decisions });
  }
  return 'still waiting after 20 decisions';
}

const secondsSince = (t: number) => ((Date.now() - t) / 1000).toFixed(0);
