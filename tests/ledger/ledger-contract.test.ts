import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { InMemoryBudgetLedger, RedisBudgetLedger } from '../../src/index';
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
