import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RedisServer } from '../../distributed/support/redis-server';
import type { EffectMode, StoreKind, Trial } from './once-matrix';

/**
 * The trials of a matrix run: for each store, `trialsPerStore` sessions of each effect mode, each killed
 * `kills` times (cycling 1..maxKills from the seed); every trial's seed derives from `seed`. Stores
 * and logs live in `dir`, for the caller to remove.
 */
export function matrixPlan(options: {
  readonly seed: number;
  readonly redis: RedisServer;
  readonly trialsPerStore: Readonly<Partial<Record<EffectMode, number>>>;
  readonly maxKills: number;
}): { readonly dir: string; readonly trials: Trial[] } {
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-once-'));
  const where: Record<StoreKind, string> = {
    file: join(dir, 'sessions'),
    sqlite: join(dir, 'sessions.db'),
    redis: `${options.redis.host}:${options.redis.port}`,
  };
  const trials: Trial[] = [];
  let n = 0;
  const modes = Object.keys(options.trialsPerStore) as EffectMode[];
  const rounds = Math.max(...modes.map((mode) => options.trialsPerStore[mode] ?? 0));
  // interleaved (each round: every store, every mode), so a run cut short still covers them all
  for (let i = 0; i < rounds; i++)
    for (const kind of ['file', 'sqlite', 'redis'] as const)
      for (const mode of modes) {
        if (i >= (options.trialsPerStore[mode] ?? 0)) continue;
        n++;
        const seed = options.seed * 1000 + n;
        trials.push({
          kind,
          where: where[kind],
          sessionId: `trial-${options.seed}-${n}`,
          logPath: join(dir, `trial-${n}.log`),
          seed,
          mode,
          kills: 1 + (seed % options.maxKills),
        });
      }
  return { dir, trials };
}
