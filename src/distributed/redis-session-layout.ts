/**
 * Where a RedisSessionStore's sessions are, across its two key layouts: today's, a session's keys
 * under its hash tag (`<prefix>{<tag>}:journal`, see redis-keys.ts), and the one before Redis
 * Cluster (`<prefix>journal:<id>` and an index of ids), moved to today's at a session's first touch.
 */
import { isValidSessionId } from '../persistence/session-id';
import { globEscape, idOfTag, legacySessionKeys, sessionKeys } from './redis-keys';
import { type RedisHandle, scanKeys } from './redis-modules';
import { MIGRATE_SCRIPT } from './redis-session-scripts';

/**
 * Moves a session stored under the old key layout to the new keys (at its first touch);
 * resolves true if it was there. Its index entry is removed after the move.
 */
export async function moveOldLayout(redis: RedisHandle, prefix: string, id: string): Promise<boolean> {
  const old = legacySessionKeys(prefix, id);
  const [journal, document] = await Promise.all([redis.exists(old.journal), redis.exists(old.document)]);
  if (journal === 0 && document === 0) return false;
  const keys = sessionKeys(prefix, id);
  await redis.eval(
    MIGRATE_SCRIPT,
    6,
    old.journal,
    old.snapshot,
    old.document,
    keys.journal,
    keys.snapshot,
    keys.document,
  );
  await redis.zrem(old.index, id);
  return true;
}

/** Removes a session's keys, in both layouts. */
export async function deleteSession(redis: RedisHandle, prefix: string, id: string): Promise<void> {
  const keys = sessionKeys(prefix, id);
  const old = legacySessionKeys(prefix, id);
  // One command per key of the old layout: on a Cluster they are in other slots.
  await Promise.all([
    redis.del(keys.journal, keys.snapshot, keys.document),
    redis.del(old.journal),
    redis.del(old.snapshot),
    redis.del(old.document),
    redis.zrem(old.index, id),
  ]);
}

/** Every session id under `prefix`, sorted: the session keys of each master, and the old layout's index. */
export async function listSessionIds(redis: RedisHandle, prefix: string): Promise<string[]> {
  const ids = new Set(await redis.zrange(legacySessionKeys(prefix, '').index, 0, -1));
  const pattern = globEscape(prefix);
  for (const kind of ['journal', 'session'])
    for (const key of await scanKeys(redis, `${pattern}{*}:${kind}`)) {
      const tag = key.slice(prefix.length + 1, key.length - kind.length - 2);
      if (key.endsWith(`}:${kind}`) && !/[{}]/.test(tag)) {
        const id = idOfTag(tag);
        if (isValidSessionId(id)) ids.add(id);
      }
    }
  return [...ids].sort();
}
