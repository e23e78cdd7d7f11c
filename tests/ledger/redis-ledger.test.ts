import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisBudgetLedger } from '../../src/ledger/redis-budget-ledger';
import { AgentState } from '../../src/state/agent-state';
import { InvalidArgumentError } from '../../src/state/errors';
import { type RedisServer, startRedisServer } from '../distributed/support/redis-server';
import { cappedAgent, expectCapHolds, firstCallCost } from './support/cap-scenario';
import type { LedgerProcessConfig } from './support/ledger-process';

let server: RedisServer;
let redis: Redis;
const children: ChildProcess[] = [];
beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.connection);
}, 20_000);
afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await redis?.quit();
  await server?.stop();
});

const ledgerOn = (prefix: string, leaseMs?: number) =>
  new RedisBudgetLedger({ connection: server.connection, prefix, ...(leaseMs && { leaseMs }) });

interface LedgerProcess {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves once the process printed `line` (rejects if it exits first). */
  printed(line: string): Promise<void>;
  go(): void;
  /** The states its runs ended with (once it printed them). */
  result(): Promise<AgentState[]>;
}

function startLedgerProcess(config: LedgerProcessConfig): LedgerProcess {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'tests/ledger/support/ledger-process.ts', JSON.stringify(config)],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  children.push(child);
  let output = '';
  const waiters: (() => void)[] = [];
  const onData = (d: Buffer) => {
    output += d;
    for (const wake of waiters.splice(0)) wake();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  child.once('exit', () => {
    for (const wake of waiters.splice(0)) wake();
  });
  const printed = (line: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (output.split('\n').some((l) => l.startsWith(line))) resolve();
        else if (child.exitCode !== null || child.signalCode !== null)
          reject(new Error(`the ledger process exited before printing '${line}': ${output}`));
        else waiters.push(check);
      };
      check();
    });
  return {
    child,
    output: () => output,
    printed,
    go: () => child.stdin?.write('go\n'),
    result: async () => {
      await printed('result ');
      const line = output.split('\n').find((l) => l.startsWith('result ')) as string;
      return (JSON.parse(line.slice('result '.length)) as unknown[]).map((json) => AgentState.fromJSON(json));
    },
  };
}

describe('RedisBudgetLedger', () => {
  it('holds a tenant cap of 10 calls worth over 30 runs at once in one process', async () => {
    const callCost = await firstCallCost();
    const ledger = ledgerOn(`t-${randomUUID()}`);
    const cap = 10 * callCost;
    await ledger.setLimit('tenant:acme', { maxCost: cap });
    const { agent } = cappedAgent(ledger);
    const states = await Promise.all(
      Array.from({ length: 30 }, () =>
        agent.execute(AgentState.empty().withUserMessage('hi'), { ledgerScopes: ['tenant:acme'] }),
      ),
    );
    await expectCapHolds(ledger, 'tenant:acme', cap, states);
    await ledger.close();
  });

  it('holds one cap for 3 processes running 10 runs each at once', async () => {
    const callCost = await firstCallCost();
    const prefix = `p-${randomUUID()}`;
    const ledger = ledgerOn(prefix);
    const cap = 10 * callCost;
    await ledger.setLimit('tenant:acme', { maxCost: cap });
    const processes = [1, 2, 3].map(() =>
      startLedgerProcess({ port: server.port, prefix, leaseMs: 10_000, scope: 'tenant:acme', runs: 10 }),
    );
    await Promise.all(processes.map((p) => p.printed('ready')));
    for (const p of processes) p.go();
    const states = (await Promise.all(processes.map((p) => p.result()))).flat();
    expect(states).toHaveLength(30);
    await expectCapHolds(ledger, 'tenant:acme', cap, states);
    await ledger.close();
  }, 120_000);

  it('releases the reservation of a process killed while its call waits, once its lease ends', async () => {
    const prefix = `k-${randomUUID()}`;
    const leaseMs = 300;
    const ledger = ledgerOn(prefix, leaseMs);
    await ledger.setLimit('tenant:acme', { maxCost: 1 });
    const doomed = startLedgerProcess({
      port: server.port,
      prefix,
      leaseMs,
      scope: 'tenant:acme',
      runs: 1,
      hang: true,
    });
    await doomed.printed('ready');
    doomed.go();
    await doomed.printed('calling');
    const held = await ledger.usage('tenant:acme');
    expect(held.reservedCost).toBeGreaterThan(0);
    // while the process lives it renews the lease: its end moves on
    const leases = `{${prefix}}:leases`;
    const [key] = await redis.zrange(leases, 0, 0);
    const first = Number(await redis.zscore(leases, key as string));
    await vi.waitUntil(async () => Number(await redis.zscore(leases, key as string)) > first, {
      timeout: 20_000,
      interval: 20,
    });
    expect((await ledger.usage('tenant:acme')).reservedCost).toBe(held.reservedCost);
    doomed.child.kill('SIGKILL');
    await vi.waitUntil(async () => (await ledger.usage('tenant:acme')).reservedCost === 0, {
      timeout: 20_000,
      interval: 20,
    });
    expect(await ledger.usage('tenant:acme')).toEqual({
      cost: 0,
      tokens: 0,
      reservedCost: 0,
      reservedTokens: 0,
    });
    await ledger.close();
  }, 60_000);

  it('keeps every key of a ledger under one hash tag, so a Redis Cluster holds them in one slot', async () => {
    const prefix = `c-${randomUUID()}`;
    const ledger = ledgerOn(prefix);
    await ledger.setLimit('a', { maxCost: 1 });
    await ledger.reserve('k', ['a', 'b'], { cost: 0.5, tokens: 1 });
    await ledger.settle('k', ['a', 'b'], { cost: 0.25, tokens: 1 });
    await ledger.reserve('k2', ['a'], { cost: 0.25, tokens: 1 });
    const keys = await redis.keys(`*${prefix}*`);
    expect(keys.length).toBeGreaterThan(2);
    for (const key of keys) expect(key.startsWith(`{${prefix}}:`)).toBe(true);
    await ledger.close();
  });

  it('checks its options', () => {
    expect(() => new RedisBudgetLedger({ connection: server.connection, leaseMs: 0 })).toThrow(
      InvalidArgumentError,
    );
    expect(() => new RedisBudgetLedger({ connection: server.connection, prefix: 'a{b}' })).toThrow(/prefix/);
    expect(() => new RedisBudgetLedger({ connection: null as never })).toThrow(/connection/);
  });
});
