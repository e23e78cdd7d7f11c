/**
 * A process of the Redis ledger tests: `runs` runs of the cap scenario's agent at once over one
 * RedisBudgetLedger, started when the test writes `go`; prints one `result <json>` line with each
 * run's outcome. With `hang`, its model call never answers (it prints `calling` once inside), so
 * the test can kill the process while its reservation is held.
 */
import { createInterface } from 'node:readline';
import { RedisBudgetLedger } from '../../../src/ledger/redis-budget-ledger';
import { createAgent } from '../../../src/runtime/create-agent';
import { AgentState } from '../../../src/state/agent-state';
import { ExecutionBudget } from '../../../src/state/execution-budget';
import { add } from '../../support/agents';
import { answering, MAX_OUTPUT, PRICE } from './ledger-models';

export interface LedgerProcessConfig {
  readonly port: number;
  readonly prefix: string;
  readonly leaseMs: number;
  readonly scope: string;
  readonly runs: number;
  readonly hang?: boolean;
}

const config = JSON.parse(process.argv[2] as string) as LedgerProcessConfig;
const ledger = new RedisBudgetLedger({
  connection: { host: '127.0.0.1', port: config.port },
  prefix: config.prefix,
  leaseMs: config.leaseMs,
});
const hang = () =>
  new Promise<void>(() => {
    console.log('calling');
  });
const model = answering('m', 2, config.hang ? hang : undefined);
const agent = createAgent({
  model,
  tools: { add },
  ledger,
  budget: new ExecutionBudget({ maxSteps: 10 }),
  modelOptions: { pricing: { m: PRICE }, callOptions: { maxOutputTokens: MAX_OUTPUT } },
});

const lines = createInterface({ input: process.stdin });
console.log('ready');
lines.once('line', async () => {
  const states = await Promise.all(
    Array.from({ length: config.runs }, () =>
      agent.execute(AgentState.empty().withUserMessage('hi'), { ledgerScopes: [config.scope] }),
    ),
  );
  console.log(`result ${JSON.stringify(states.map((state) => state.toJSON()))}`);
  await ledger.close();
  lines.close();
});
