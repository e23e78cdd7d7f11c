/**
 * Child process of the worker pool tests: one agent worker with the ledger agent, until it is
 * killed (SIGKILL) or told to stop (SIGTERM: graceful close). Prints `ready <tag>` once it takes jobs.
 * Usage: worker-process.ts '<WorkerProcessConfig as JSON>'
 */
import { Cluster } from 'ioredis';
import { createAgentWorker, RedisSessionStore } from '../../../src/distributed/index';
import type { ToolEffect } from '../../../src/tools/define-tool';
import { type LedgerAgentOptions, ledgerAgent } from './ledger-agent';

export interface WorkerProcessConfig {
  readonly port: number;
  /** The ports of a Redis Cluster's masters: the worker is given an ioredis Cluster (and `port` is not used). */
  readonly clusterPorts?: readonly number[];
  readonly queueName: string;
  /** The store's key prefix; left out, the store's default. */
  readonly storePrefix?: string;
  readonly ledger: string;
  readonly tag: string;
  readonly concurrency: number;
  readonly modelDelayMs: number;
  readonly toolDelayMs: number;
  /** The worker's timing options; left out, the defaults. */
  readonly lockDurationMs?: number;
  readonly stalledIntervalMs?: number;
  readonly sessionLockTtlMs?: number;
  readonly busyRetryDelayMs?: number;
  /** The ledger tool's effect (default 'idempotent'). */
  readonly effect?: ToolEffect;
  /** Calls that kill the worker the first N times they run (ledgerAgent's `crashCalls`). */
  readonly crashCalls?: Readonly<Record<string, number>>;
  readonly maxSessionCrashes?: number;
  /** The process SIGSTOPs itself as this step's model call answers (ledgerAgent's `selfStopAtStep`). */
  readonly selfStopAtStep?: number;
  /** The ledger tool reconciles interrupted calls from the ledger (ledgerAgent's `reconcile`). */
  readonly reconcile?: boolean;
}

const config = JSON.parse(process.argv[2] as string) as WorkerProcessConfig;
const connection = config.clusterPorts
  ? new Cluster(config.clusterPorts.map((port) => ({ host: '127.0.0.1', port })))
  : { host: '127.0.0.1', port: config.port };
/** The store, printing each save a lost lock refused (`save refused <code>`), for the fencing test. */
class PrintingStore extends RedisSessionStore {
  override fencedSave(...args: Parameters<RedisSessionStore['fencedSave']>): Promise<number> {
    return super.fencedSave(...args).catch((error: { code?: string }) => {
      process.stdout.write(`save refused ${error.code}\n`);
      throw error;
    });
  }
}
const store = new PrintingStore({ connection, prefix: config.storePrefix });
const ledger = (options: Partial<LedgerAgentOptions>) => () =>
  ledgerAgent({
    ledger: config.ledger,
    workerTag: config.tag,
    modelDelayMs: config.modelDelayMs,
    toolDelayMs: config.toolDelayMs,
    effect: config.effect,
    crashCalls: config.crashCalls,
    selfStopAtStep: config.selfStopAtStep,
    reconcile: config.reconcile,
    ...options,
  });
const worker = await createAgentWorker({
  agents: {
    ledger: ledger({}),
    // the settle drill's sessions: unsafe calls without a reconcile, and with one
    'ledger-unsafe': ledger({ effect: 'unsafe', reconcile: false }),
    'ledger-reconcile': ledger({ reconcile: true }),
  },
  store,
  connection,
  id: config.tag,
  queueName: config.queueName,
  concurrency: config.concurrency,
  lockDurationMs: config.lockDurationMs,
  stalledIntervalMs: config.stalledIntervalMs,
  sessionLockTtlMs: config.sessionLockTtlMs,
  busyRetryDelayMs: config.busyRetryDelayMs,
  maxSessionCrashes: config.maxSessionCrashes,
  // errors are printed with their code, so a test can read them in the output
  onError: (error) =>
    console.error(`worker error ${(error as { code?: string }).code ?? ''} ${error.message}`),
});

const stop = async () => {
  await worker.close();
  await store.close();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
// The parent closing our stdin (it exited or crashed) ends us too: no orphan workers.
process.stdin.on('end', () => process.exit(1));
process.stdin.resume();
process.stdout.write(`ready ${config.tag}\n`);
