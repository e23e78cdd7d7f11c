import { AgentMachineError, InvalidArgumentError, shownValue } from '../state/errors';
import {
  type BudgetLedger,
  checkLimit,
  checkScope,
  type LedgerAmount,
  type LedgerClock,
  type LedgerLimit,
  type LedgerReservation,
  type LedgerSpend,
  type LedgerUsage,
  periodKey,
} from './budget-ledger';
import { RELEASE, RENEW, RESERVE, SETTLE, USAGE } from './ledger-scripts';
import { runScript } from './redis-script-call';

/** The commands the ledger sends: an ioredis client (or a Cluster client) has them. */
interface LedgerRedis {
  readonly status: string;
  eval(script: string, numberOfKeys: number, ...args: (string | number)[]): Promise<unknown>;
  evalsha(sha: string, numberOfKeys: number, ...args: (string | number)[]): Promise<unknown>;
  hset(key: string, field: string, value: string): Promise<unknown>;
  quit(): Promise<unknown>;
  disconnect(): void;
}

export interface RedisBudgetLedgerOptions extends LedgerClock {
  /**
   * Where Redis is: ioredis connection options (`{ host, port, ... }`) or a connected ioredis
   * client (a `Redis` or a `Cluster`), of which the ledger opens a duplicate of its own and closes
   * it on `close()`.
   */
  readonly connection: object;
  /**
   * Names the ledger's keys; every key is `{prefix}:...`, one hash tag, so on a Redis Cluster they
   * all live in one slot (a reservation on several scopes is one script). Default `agent-machine:ledger`.
   */
  readonly prefix?: string;
  /**
   * How long a reservation outlives its process's last sign of life (ms): a call in flight renews
   * it every leaseMs / 3; one whose process died is released once the lease ends. Default 10,000.
   */
  readonly leaseMs?: number;
}

/** `ioredis` is not installed: an optional peer, needed only for the Redis ledger given options. */
export class LedgerDependencyMissingError extends AgentMachineError {
  static override get name(): string {
    return 'LedgerDependencyMissingError';
  }

  constructor(options?: { cause?: unknown }) {
    super(
      'LEDGER_DEPENDENCY_MISSING',
      'RedisBudgetLedger needs the optional package "ioredis", which is not installed (or could not be loaded). Run `npm install ioredis`.',
      options,
    );
  }
}

/**
 * The budget ledger of every process over one Redis (or a Redis Cluster): limits, spending and
 * reservations live in Redis, and each reservation is one Lua script, so a cap holds across
 * workers. Reservations of a process that died are released after `leaseMs`.
 *
 * @example
 * const ledger = new RedisBudgetLedger({ connection: { host: '127.0.0.1', port: 6379 } });
 * await ledger.setLimit('tenant:acme', { maxCost: 50, period: 'month' });
 * const agent = createAgent({ model, ledger, modelOptions: { pricing, callOptions: { maxOutputTokens: 1000 } } });
 */
export class RedisBudgetLedger implements BudgetLedger {
  readonly leaseMs: number;
  readonly #keys: readonly string[];
  readonly #connection: object;
  readonly #now: () => number;
  #redis: Promise<LedgerRedis> | null = null;
  #closed = false;

  constructor(options: RedisBudgetLedgerOptions) {
    if (typeof options?.connection !== 'object' || options.connection === null)
      throw new InvalidArgumentError(
        'RedisBudgetLedger({ connection })',
        `expected ioredis options or a client, got ${shownValue(options?.connection)}`,
      );
    const prefix = options.prefix ?? 'agent-machine:ledger';
    if (typeof prefix !== 'string' || prefix.length === 0 || /[{}]/.test(prefix))
      throw new InvalidArgumentError(
        'RedisBudgetLedger({ prefix })',
        `expected a non-empty string without braces (it becomes the keys' hash tag), got ${shownValue(prefix)}`,
      );
    const leaseMs = options.leaseMs ?? 10_000;
    if (typeof leaseMs !== 'number' || !Number.isInteger(leaseMs) || leaseMs < 1)
      throw new InvalidArgumentError(
        'RedisBudgetLedger({ leaseMs })',
        `expected a whole number of ms >= 1, got ${shownValue(leaseMs)}`,
      );
    this.leaseMs = leaseMs;
    this.#connection = options.connection;
    this.#now = options.now ?? Date.now;
    this.#keys = ['limits', 'spent', 'held', 'leases', 'reservations'].map((name) => `{${prefix}}:${name}`);
  }

  async setLimit(scope: string, limit: LedgerLimit): Promise<void> {
    const { maxCost, maxTokens, period } = checkLimit(scope, limit);
    const redis = await this.#open();
    await redis.hset(this.#keys[0] as string, scope, `${maxCost ?? ''}|${maxTokens ?? ''}|${period ?? ''}`);
  }

  async usage(scope: string): Promise<LedgerUsage> {
    checkScope(scope, 'usage(scope)');
    const [cost, tokens, reservedCost, reservedTokens] = (await this.#run(
      USAGE,
      scope,
      ...this.#periods(),
    )) as string[];
    return {
      cost: Number(cost),
      tokens: Number(tokens),
      reservedCost: Number(reservedCost),
      reservedTokens: Number(reservedTokens),
    };
  }

  async reserve(key: string, scopes: readonly string[], amount: LedgerAmount): Promise<LedgerReservation> {
    const answer = (await this.#run(
      RESERVE,
      key,
      amount.cost === null ? '' : String(amount.cost),
      amount.tokens === null ? '' : String(amount.tokens),
      ...this.#periods(),
      this.leaseMs,
      ...scopes,
    )) as string[];
    const [status, scope, measure, spent, reserved, max] = answer;
    if (status === 'reserved') return { status };
    if (status === 'unbounded')
      return { status, scope: scope as string, measure: measure as 'cost' | 'tokens' };
    return {
      status: 'refused',
      scope: scope as string,
      measure: measure as 'cost' | 'tokens',
      spent: Number(spent),
      reserved: Number(reserved),
      max: Number(max),
    };
  }

  async renew(key: string): Promise<void> {
    await this.#run(RENEW, key, this.leaseMs);
  }

  async settle(key: string, scopes: readonly string[], spent: LedgerSpend): Promise<void> {
    await this.#run(SETTLE, key, String(spent.cost), String(spent.tokens), ...this.#periods(), ...scopes);
  }

  async release(key: string): Promise<void> {
    await this.#run(RELEASE, key);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const opened = this.#redis;
    this.#redis = null;
    if (!opened) return;
    const redis = await opened.catch(() => null);
    if (!redis || redis.status === 'end') return;
    if (redis.status !== 'ready') redis.disconnect();
    else await redis.quit();
  }

  #periods(): [string, string] {
    const now = this.#now();
    return [periodKey('day', now), periodKey('month', now)];
  }

  /** Runs `script` with the ledger's keys (by its SHA1: redis-script-call.ts). */
  async #run(script: string, ...args: (string | number)[]): Promise<unknown> {
    return runScript(await this.#open(), script, this.#keys.length, ...this.#keys, ...args);
  }

  #open(): Promise<LedgerRedis> {
    if (this.#closed)
      return Promise.reject(new InvalidArgumentError('RedisBudgetLedger', 'used after close()'));
    if (!this.#redis) {
      const opening = openConnection(this.#connection);
      this.#redis = opening;
      // a failed open is not kept: the next call tries again
      opening.catch(() => {
        if (this.#redis === opening) this.#redis = null;
      });
    }
    return this.#redis;
  }
}

type RedisConstructor = new (options: object) => LedgerRedis;

async function openConnection(connection: object): Promise<LedgerRedis> {
  const client = connection as { duplicate?: () => LedgerRedis };
  if (typeof client.duplicate === 'function') return client.duplicate();
  let module: { Redis?: RedisConstructor; default?: RedisConstructor };
  try {
    const name = 'ioredis';
    // a variable specifier keeps bundlers from inlining the package or failing without it
    module = await import(name);
  } catch (error) {
    throw new LedgerDependencyMissingError({ cause: error });
  }
  const Redis = module.Redis ?? module.default;
  if (typeof Redis !== 'function') throw new LedgerDependencyMissingError();
  return new Redis(connection);
}
