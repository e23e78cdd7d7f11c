/**
 * runScript: a script runs by its SHA1 once the server has it, and its text is sent again only
 * where the server says NOSCRIPT (a new server, SCRIPT FLUSH, a restart). Other errors pass through.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript } from '../../src/ledger/redis-script-call';
import { type RedisServer, startRedisServer } from '../distributed/support/redis-server';

let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.connection);
}, 20_000);

afterAll(async () => {
  await redis?.quit();
  await server?.stop();
});

async function calls(): Promise<{ eval: number; evalsha: number }> {
  const info = await redis.info('commandstats');
  const count = (name: string) =>
    Number(new RegExp(`^cmdstat_${name}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  return { eval: count('eval'), evalsha: count('evalsha') };
}

describe('runScript', () => {
  const script = "return redis.call('INCRBY', KEYS[1], ARGV[1])";

  it('sends the text once, then only the SHA1; again after the server forgets it', async () => {
    await redis.script('FLUSH');
    await redis.config('RESETSTAT');
    expect(await runScript(redis, script, 1, 'counter', '2')).toBe(2);
    expect(await runScript(redis, script, 1, 'counter', '3')).toBe(5);
    expect(await runScript(redis, script, 1, 'counter', '4')).toBe(9);
    // the first EVALSHA found nothing (NOSCRIPT), one EVAL; the next two ran by SHA1
    expect(await calls()).toEqual({ eval: 1, evalsha: 3 });
    await redis.script('FLUSH');
    expect(await runScript(redis, script, 1, 'counter', '1')).toBe(10);
    expect(await calls()).toEqual({ eval: 2, evalsha: 4 });
  });

  it("passes a script's own error through", async () => {
    await expect(runScript(redis, "return redis.error_reply('BOOM no')", 0)).rejects.toThrow('BOOM no');
  });
});
