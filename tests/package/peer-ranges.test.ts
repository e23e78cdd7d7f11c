/**
 * The optional peers' ranges admit the majors the tests ran against. ioredis 6 is what a new
 * project's `npm install ioredis` gets (#44 item 9d): a range of ^5 alone made npm refuse the
 * install (ERESOLVE). The Redis stores' tests (tests/persistence/redis-session-store.test.ts,
 * tests/chat/stream-store.contract.test.ts, tests/distributed/session-lock.test.ts) ran against
 * ioredis 6.1.0 as well as the 5.x installed here.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const manifest = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8'));

/** Whether `version` (x.y.z) satisfies `range`, a `||` of caret ranges (`^5.11.1 || ^6.0.0`). */
function satisfiesCaret(version: string, range: string): boolean {
  const [major, minor, patch] = version.split('.').map(Number) as [number, number, number];
  return range.split('||').some((part) => {
    const match = part.trim().match(/^\^(\d+)\.(\d+)\.(\d+)$/);
    if (!match) throw new Error(`not a caret range: ${part}`);
    const [low, lowMinor, lowPatch] = match.slice(1).map(Number) as [number, number, number];
    return major === low && (minor > lowMinor || (minor === lowMinor && patch >= lowPatch));
  });
}

describe('optional peer ranges', () => {
  it('ioredis: 5 (from 5.11.1) and 6', () => {
    const range = manifest.peerDependencies.ioredis as string;
    expect(
      ['5.11.1', '5.12.0', '6.0.0', '6.1.0', '5.10.0', '7.0.0'].map((v) => satisfiesCaret(v, range)),
    ).toEqual([true, true, true, true, false, false]);
  });
});
