/**
 * Runs a Lua script by its SHA1 (`EVALSHA`), sending its text (`EVAL`) only where the server does
 * not have it yet (`NOSCRIPT`: a new server, a restart, each master of a Cluster once). The scripts
 * run at every step or chunk are 1-2 KB: sent with every call, their text was most of what a
 * worker wrote to its socket.
 */
import { createHash } from 'node:crypto';
import type { RedisHandle } from './redis-modules';

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
  redis: RedisHandle,
  script: string,
  numberOfKeys: number,
  ...keysAndArgs: string[]
): Promise<unknown> {
  try {
    return await redis.evalsha(shaOf(script), numberOfKeys, ...keysAndArgs);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
    return redis.eval(script, numberOfKeys, ...keysAndArgs);
  }
}
