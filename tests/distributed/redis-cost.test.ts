/**
 * What the worker pool costs Redis: commands per scripted step (`INFO commandstats` over a run of
 * K 5-step sessions, so the commands scripts run count too) and memory per finished 5-step session
 * (`MEMORY USAGE` of every key of the session and of its job, and its share of the queue's shared
 * keys). And: a job no one listens to publishes no progress events; one with `onProgress` (or
 * `progress: true`, then `job.onProgress`) does; `job.onProgress` on a job without throws.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentStepProgress,
  createAgentClient,
  createAgentWorker,
  RedisSessionStore,
} from '../../src/distributed/index';
import { InvalidArgumentError } from '../../src/state/errors';
import { LEDGER_STEPS, ledgerAgent, ledgerState } from './support/ledger-agent';
import { type RedisServer, startRedisServer } from './support/redis-server';

const K = 10;

let server: RedisServer;
let raw: Redis;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  raw = new Redis(server.connection);
}, 20_000);

afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await raw?.quit();
  await server?.stop();
});

/** Calls per command since the last CONFIG RESETSTAT (scripts' inner calls included). */
async function commandCalls(): Promise<Map<string, number>> {
  const info = await raw.info('commandstats');
  const calls = new Map<string, number>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    calls.set(match[1] as string, Number(match[2]));
  return calls;
}

async function bytes(keys: readonly string[]): Promise<number> {
  let total = 0;
  for (const key of keys) total += Number((await raw.memory('USAGE', key, 'SAMPLES', '0')) ?? 0);
  return total;
}

describe('Redis cost of the worker pool', () => {
  it(`K=${K} 5-step sessions: commands per step, bytes per finished session; no progress events unless listened to`, async () => {
    const queueName = `cost-${randomUUID()}`;
    const prefix = `${queueName}:`;
    const store = new RedisSessionStore({ connection: server.connection, prefix });
    closers.push(() => store.close());
    const worker = await createAgentWorker({
      agents: { ledger: () => ledgerAgent({ ledger: '/dev/null', workerTag: 'w' }) },
      store,
      connection: server.connection,
      queueName,
      concurrency: K,
    });
    closers.push(() => worker.close());
    const client = await createAgentClient({ connection: server.connection, queueName, store });
    closers.push(() => client.close());

    await raw.config('RESETSTAT');
    const jobs = await Promise.all(
      Array.from({ length: K }, (_, i) =>
        client.execute({ agent: 'ledger', sessionId: `cost-${i}`, state: ledgerState(`cost-${i}`) }),
      ),
    );
    const results = await Promise.all(jobs.map((job) => job.finished({ timeoutMs: 60_000 })));
    const calls = await commandCalls();
    expect(results.every((r) => r.status === 'completed' && r.state.stepCount() === LEDGER_STEPS)).toBe(true);
    calls.delete('info');
    const total = [...calls.values()].reduce((a, b) => a + b, 0);
    const top = [...calls]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([name, n]) => `${name} ${(n / (K * LEDGER_STEPS)).toFixed(1)}`)
      .join(', ');

    // memory: each session's keys and its job's, plus a share of the queue's shared keys
    const eventsKey = `bull:${queueName}:events`;
    const sharedKeys = (await raw.keys(`bull:${queueName}:*`)).filter(
      (key) => !jobs.some((job) => key.startsWith(`bull:${queueName}:${job.id}`)),
    );
    const perSession: number[] = [];
    for (const [i, job] of jobs.entries()) {
      const own = [
        ...(await raw.keys(`${prefix}{cost-${i}}*`)),
        ...(await raw.keys(`*{cost-${i}}:*`)).filter((k) => !k.startsWith(prefix)),
        ...(await raw.keys(`bull:${queueName}:${job.id}*`)),
      ];
      perSession.push(await bytes([...new Set(own)]));
    }
    const shared = await bytes(sharedKeys);
    const sessionBytes = Math.max(...perSession) + shared / K;
    const progressEvents = (await raw.xrange(eventsKey, '-', '+')).filter(([, fields]) =>
      fields.includes('progress'),
    ).length;
    console.log(
      `[redis-cost] ${K} sessions of ${LEDGER_STEPS} steps: ${(total / (K * LEDGER_STEPS)).toFixed(1)} Redis commands per step ` +
        `(INFO commandstats, scripts' calls included; ${top}); ` +
        `${sessionBytes.toFixed(0)} bytes per finished session (its keys and job ${Math.max(...perSession)}, ` +
        `share of the queue's keys ${(shared / K).toFixed(0)}); progress events: ${progressEvents}`,
    );
    // no one listened: no progress events
    expect(progressEvents).toBe(0);

    // a job with a listener gets each step
    const seen: AgentStepProgress[] = [];
    const listened = await client.execute(
      { agent: 'ledger', sessionId: 'listened', state: ledgerState('listened') },
      { onProgress: (p) => seen.push(p) },
    );
    await listened.finished({ timeoutMs: 60_000 });
    const listenedEvents = (await raw.xrange(eventsKey, '-', '+')).filter(([, fields]) =>
      fields.includes('progress'),
    ).length;
    expect(listenedEvents).toBe(LEDGER_STEPS);
    expect(seen.map((p) => p.stepNumber)).toEqual([1, 2, 3, 4, 5]);

    // progress: true, and a listener subscribed after the enqueue
    const later = await client.execute(
      { agent: 'ledger', sessionId: 'later', state: ledgerState('later') },
      { progress: true },
    );
    const laterSeen: number[] = [];
    later.onProgress((p) => laterSeen.push(p.stepNumber));
    await later.finished({ timeoutMs: 60_000 });
    expect(laterSeen.length).toBeGreaterThan(0);
    expect(laterSeen).toEqual(laterSeen.toSorted((a, b) => a - b));
    // a job enqueued without progress cannot be listened to: said, not silent
    expect(() => (jobs[0] as (typeof jobs)[number]).onProgress(() => undefined)).toThrow(
      InvalidArgumentError,
    );
    expect(() => (jobs[0] as (typeof jobs)[number]).onProgress(() => undefined)).toThrow('progress');
    await expect(
      client.execute(
        { agent: 'ledger', sessionId: 'bad', state: ledgerState('bad') },
        { progress: 'yes' as unknown as boolean },
      ),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
  }, 120_000);
});
