/**
 * Runs a Lua script by its SHA1 (`EVALSHA`), sending its text (`EVAL`) only where the server does
 * not have it yet (`NOSCRIPT`: a new server, a restart, each master of a Cluster once). The scripts
 * run at every step or chunk are 1-2 KB: sent with every call, their text was most of what a
 * worker wrote to its socket. Shared by RedisBudgetLedger and the Redis stores of src/distributed;
 * it lives here because the ledger is the lowest folder that talks to Redis.
 */
import { createHash } from 'node:crypto';

/** The two commands a script call sends: an ioredis client (or a Cluster client) has them. */
export interface ScriptCommands {
  eval(script: string, numberOfKeys: number, ...args: (string | number)[]): Promise<unknown>;
  evalsha(sha: string, numberOfKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

const shas = new Map<string, string>();

function shaOf(script: string): string {
  let sha = shas.get(script);
  if (sha === undefined) {
    sha = createHash('sha1').update(script).digest('hex');
    shas.set(script, sha);
  }
  return sha;
}

export async function runScript(
  redis: ScriptCommands,
  script: string,
  numberOfKeys: number,
  ...keysAndArgs: (string | number)[]
): Promise<unknown> {
  try {
    return await redis.evalsha(shaOf(script), numberOfKeys, ...keysAndArgs);
  } catch (error) {
    if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
    return redis.eval(script, numberOfKeys, ...keysAndArgs);
  }
}
