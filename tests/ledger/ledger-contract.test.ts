import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { InMemoryBudgetLedger } from '../../src/ledger/in-memory-budget-ledger';
import { RedisBudgetLedger } from '../../src/ledger/redis-budget-ledger';
import { type RedisServer, startRedisServer } from '../distributed/support/redis-server';
import { ledgerContract } from './support/ledger-contract';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
}, 20_000);
afterAll(async () => {
  await server?.stop();
});

ledgerContract('InMemoryBudgetLedger', (now) => new InMemoryBudgetLedger({ now }));
ledgerContract(
  'RedisBudgetLedger',
  (now) => new RedisBudgetLedger({ connection: server.connection, prefix: `test-${randomUUID()}`, now }),
);
