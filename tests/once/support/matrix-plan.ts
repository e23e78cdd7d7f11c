import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RedisServer } from '../../distributed/support/redis-server';
import { type EffectMode, type StoreKind, seeded, type Trial } from './once-matrix';

/**
 * The trials of a matrix run: for each store, `trialsPerStore` sessions of each effect mode, each killed
 * `kills` times (1..maxKills, drawn from its seed); every trial's seed derives from `seed`. Stores
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
          // drawn from the seed (not `seed % maxKills`: with three modes, that gave each mode one count)
          kills: 1 + Math.floor(seeded(seed + 7)() * options.maxKills),
        });
      }
  return { dir, trials };
}
