/**
 * The worker pool on a real 3-master Redis Cluster with default options: two worker processes and
 * a client, each given an ioredis Cluster as `connection` (BullMQ gets a Cluster and the queue
 * prefix `{bull:<queue>}`, the store and the session locks their per-session hash tags). One
 * worker is SIGKILLed mid-run; every session completes, and the sessions are on every master.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type AgentClient,
  createAgentClient,
  DEFAULT_SESSION_KEY_PREFIX,
  RedisSessionStore,
} from '../../src/distributed/index';
import { ExecutionStatus } from '../../src/state/execution-status';
import { LEDGER_ANSWER, LEDGER_STEPS, ledgerState, readLedger } from './support/ledger-agent';
import { type RedisCluster, startRedisCluster } from './support/redis-cluster';
import type { WorkerProcessConfig } from './support/worker-process';
import { startWorkerProcess, type WorkerProcess } from './support/worker-processes';

const SESSIONS = 24;

let cluster: RedisCluster;
let raw: Cluster;
let dir: string;
let client: AgentClient | null = null;
let store: RedisSessionStore | null = null;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
  raw = cluster.client();
  dir = mkdtempSync(join(tmpdir(), 'agent-machine-cluster-pool-'));
}, 60_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  await client?.close();
  await store?.close();
  await raw?.quit();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

describe('the worker pool on Redis Cluster, default options', () => {
  it('two worker processes, one SIGKILLed mid-run: every session completes, sessions on every master', async () => {
    const queueName = `pool-${randomUUID()}`;
    const ledger = join(dir, 'ledger.txt');
    const config = (tag: string): WorkerProcessConfig => ({
      port: 0,
      clusterPorts: cluster.nodes.map((n) => n.port),
      queueName,
      ledger,
      tag,
      concurrency: 4,
      modelDelayMs: 15,
      toolDelayMs: 15,
    });
    workers.push(...(await Promise.all(['w1', 'w2'].map((tag) => startWorkerProcess(config(tag))))));
    const [victim] = workers as [WorkerProcess, WorkerProcess];

    client = await createAgentClient({
      connection: raw,
      queueName,
      jobOptions: { attempts: 3, backoff: { type: 'fixed', delay: 100 } },
    });
    // ids of their own per run of the suite: the store uses the default prefix
    const run = randomUUID().slice(0, 8);
    const sessionIds = Array.from({ length: SESSIONS }, (_, i) => `c-${run}-${i}`);
    const jobs = await Promise.all(
      sessionIds.map((sessionId) =>
        (client as AgentClient).execute({ agent: 'ledger', sessionId, state: ledgerState(sessionId) }),
      ),
    );
    const results = Promise.all(jobs.map((job) => job.finished({ timeoutMs: 120_000 })));
    results.catch(() => undefined);

    await vi.waitUntil(() => readLedger(ledger).filter((l) => l.worker === victim.tag).length >= 4, {
      timeout: 30_000,
      interval: 5,
    });
    expect(await victim.kill()).toBe('SIGKILL');

    const finished = await results;
    for (const [i, result] of finished.entries()) {
      expect(result.sessionId).toBe(sessionIds[i]);
      expect(result.status).toBe(ExecutionStatus.Completed);
      expect(result.state.finalResponse()).toBe(LEDGER_ANSWER);
      expect(result.state.stepCount()).toBe(LEDGER_STEPS);
    }
    // the victim's sessions were finished by the other worker
    expect(finished.some((r) => r.workerId === 'w2')).toBe(true);

    // the store (default prefix) holds every final state; the sessions are on every master
    store = new RedisSessionStore({ connection: raw });
    for (const result of finished) expect((await store.load(result.sessionId))?.version).toBe(result.version);
    expect((await store.list()).filter((id) => id.startsWith(`c-${run}-`)).sort()).toEqual(
      [...sessionIds].sort(),
    );
    const perMaster = await cluster.keysPerMaster(`${DEFAULT_SESSION_KEY_PREFIX}{c-${run}-*}:journal`);
    expect([...perMaster.values()].reduce((a, b) => a + b, 0)).toBe(SESSIONS);
    expect([...perMaster.values()].every((count) => count > 0)).toBe(true);
    // the queue's keys share the hash tag {bull:<queue>}: one slot, one master
    const queueKeys = await cluster.keysPerMaster(`{bull:${queueName}}:*`);
    expect([...queueKeys.values()].filter((count) => count > 0)).toHaveLength(1);
  }, 180_000);
});
