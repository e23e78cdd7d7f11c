/**
 * The crash matrix through the worker pool: per trial, a worker process runs a ledger session whose
 * `record` tool is unsafe and is SIGKILLed at a random moment; a second worker takes the session over;
 * the calls a kill interrupted are decided (`approve`, `reject`, `complete` by the seed) by decide
 * jobs until the session completes. The ledger counts each call's effects.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createAgentClient } from '../../../src/distributed/index';
import type { ApprovalInput } from '../../../src/state/approval';
import { LEDGER_TOOL_STEPS, ledgerState, readLedger } from '../../distributed/support/ledger-agent';
import type { RedisServer } from '../../distributed/support/redis-server';
import type { WorkerProcessConfig } from '../../distributed/support/worker-process';
import { startWorkerProcess, type WorkerProcess } from '../../distributed/support/worker-processes';
import { decisionFor, seeded } from './once-matrix';

export interface PoolTrialResult {
  readonly seed: number;
  readonly killed: boolean;
  /** Calls whose effect ran more often than once plus the approvals of it as interrupted (must be 0). */
  readonly repeatedUnsafeEffects: number;
  readonly interrupted: { approve: number; reject: number; complete: number };
  readonly completed: boolean;
}

export async function runPoolTrial(redis: RedisServer, dir: string, seed: number): Promise<PoolTrialResult> {
  const random = seeded(seed);
  const queueName = `once-pool-${randomUUID()}`;
  const ledger = join(dir, `pool-${seed}.ledger`);
  const config = (tag: string, toolDelayMs: number): WorkerProcessConfig => ({
    port: redis.port,
    queueName,
    storePrefix: `once-pool-${seed}:`,
    ledger,
    tag,
    concurrency: 1,
    modelDelayMs: 10,
    toolDelayMs,
    lockDurationMs: 2_000,
    stalledIntervalMs: 1_000,
    sessionLockTtlMs: 2_000,
    busyRetryDelayMs: 100,
    effect: 'unsafe',
  });
  const workers: WorkerProcess[] = [];
  const client = await createAgentClient({
    connection: redis.connection,
    queueName,
    jobOptions: { attempts: 3, backoff: { type: 'fixed', delay: 100 } },
  });
  try {
    workers.push(await startWorkerProcess(config('victim', 10 + Math.floor(random() * 60))));
    const sessionId = `pool-${seed}`;
    const job = await client.execute({ agent: 'ledger', sessionId, state: ledgerState(sessionId) });
    const first = job.finished({ timeoutMs: 60_000 });
    first.catch(() => undefined);
    const victim = workers[0] as WorkerProcess;
    await new Promise((resolve) => setTimeout(resolve, random() * 500));
    const killed = victim.child.exitCode === null && (await victim.kill()) === 'SIGKILL';
    workers.push(await startWorkerProcess(config('rescuer', 5)));
    let result = await first;
    const interrupted = { approve: 0, reject: 0, complete: 0 };
    const approvedInterrupted = new Map<string, number>();
    for (let round = 0; round < 10 && result.state.pendingApprovals().length > 0; round++) {
      const decisions: ApprovalInput[] = result.state.pendingApprovals().map((p) => {
        const decision = decisionFor(p, seed + round);
        if (p.reason === 'interrupted') {
          interrupted[decision.type]++;
          if (decision.type === 'approve')
            approvedInterrupted.set(p.toolCallId, (approvedInterrupted.get(p.toolCallId) ?? 0) + 1);
        }
        return { ...decision, toolCallId: p.toolCallId } as ApprovalInput;
      });
      result = await (await client.decide({ agent: 'ledger', sessionId, decisions })).finished({
        timeoutMs: 60_000,
      });
    }
    const lines = readLedger(ledger);
    let repeatedUnsafeEffects = 0;
    for (let n = 1; n <= LEDGER_TOOL_STEPS; n++) {
      const id = `${sessionId}-call-${n}`;
      const ran = lines.filter((l) => l.callId === id).length;
      if (ran > 1 + (approvedInterrupted.get(id) ?? 0)) repeatedUnsafeEffects++;
    }
    return { seed, killed, repeatedUnsafeEffects, interrupted, completed: result.status === 'completed' };
  } finally {
    await Promise.all(workers.map((w) => w.kill()));
    await client.close();
  }
}
